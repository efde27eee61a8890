package kernel_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/argschema"
	"github.com/bulwarkmcp/bulwark/kernel/mcptest"
)

type recordArg struct {
	Value   string `json:"value"`
	Comment string `json:"comment,omitempty"`
}

type validArgs struct {
	Zone    string            `json:"zone"`
	TTL     *int              `json:"ttl,omitempty"`
	Records []recordArg       `json:"records,omitempty"`
	Labels  map[string]string `json:"labels,omitempty"`
	Kind    string            `json:"kind,omitempty"`
}

func validationServer(t *testing.T) *mcptest.Session {
	t.Helper()
	tool := argschema.Refine(kernel.NewTool(kernel.Spec[validArgs, map[string]int]{
		Name: "set", Description: "d.", Policy: readPolicy,
		Handle: func(context.Context, *kernel.Call, validArgs) (map[string]int, error) { return map[string]int{}, nil },
	}), map[string]argschema.Rule{
		"zone":    argschema.All(argschema.Pattern(`^[a-z.]+$`), argschema.MaxLen(12)),
		"ttl":     argschema.All(argschema.Only("integer"), argschema.Between(60, 3600)),
		"records": argschema.All(argschema.MaxItems(3), argschema.ItemsOf(argschema.Prop("value", argschema.MinLen(1)))),
		"labels": func(p *jsonschema.Schema) {
			p.AdditionalProperties = &jsonschema.Schema{Type: "string", MaxLength: ptr(4)}
		},
		"kind": argschema.Enum([]string{"A", "AAAA"}),
	})
	srv, err := kernel.New(kernel.Info{Name: "x"}, []kernel.Tool{tool}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return mcptest.Connect(t, srv, nil)
}

func ptr[T any](v T) *T { return &v }

// TestValidationMessages pins the readable tool error for each rule: the
// argument's path, the rule, and a bounded quote of the value. The rule
// comes from the compiled validator's structured failure; no library
// message is parsed. When several arguments fail, the first in name order
// is reported, on every run.
func TestValidationMessages(t *testing.T) {
	s := validationServer(t)
	const hint = "\nHint: Check the tool's input schema and call it again with corrected arguments."
	for _, c := range []struct {
		args string
		want string
	}{
		{`{}`, `required: missing properties: ["zone"]`},
		{`{"zone":"a","admin":true}`, `unexpected additional properties ["admin"]`},
		{`{"zone":"a","ttl":5}`, `argument "ttl": minimum: 5 is less than 60`},
		{`{"zone":"a","ttl":7200}`, `argument "ttl": maximum: 7200 is greater than 3600`},
		{`{"zone":"a","ttl":60.5}`, `argument "ttl": type: 60.5 has type "number", want "integer"`},
		{`{"zone":"a","ttl":null}`, `argument "ttl": type: null has type "null", want "integer"`},
		{`{"zone":"a","ttl":"x"}`, `argument "ttl": type: "x" has type "string", want "integer"`},
		{`{"zone":"EX"}`, `argument "zone": pattern: "EX" does not match regular expression "^[a-z.]+$"`},
		{`{"zone":"abcdefghijklm"}`, `argument "zone": maxLength: "abcdefghijklm" contains 13 Unicode code points, more than 12`},
		{`{"zone":{"a":[1,2]}}`, `argument "zone": type: {"a":[1,2]} has type "object", want "string"`},
		{`{"zone":"a","kind":"MX"}`, `argument "kind": enum: "MX" does not equal any of: ["A","AAAA"]`},
		{`{"zone":"a","records":[{"value":"v"},{"value":""}]}`, `argument "records[].value": minLength: "" contains 0 Unicode code points, fewer than 1`},
		{`{"zone":"a","records":[{"value":"v","x":1}]}`, `argument "records[]": unexpected additional properties ["x"]`},
		{`{"zone":"a","records":[{},{},{},{}]}`, `argument "records": maxItems: array length 4 is greater than 3`},
		{`{"zone":"a","labels":{"env":"production"}}`, `argument "labels.env": maxLength: "production" contains 10 Unicode code points, more than 4`},
		{`{"zone":"EX","ttl":1,"kind":"MX"}`, `argument "kind": enum: "MX" does not equal any of: ["A","AAAA"]`},
	} {
		res := s.Call(t, "set", json.RawMessage(c.args))
		want := "Error (invalid_argument): Invalid arguments: " + c.want + hint
		if got := mcptest.Text(res); !res.IsError || got != want {
			t.Errorf("%s:\n got %q\nwant %q", c.args, got, want)
		}
	}
	if res := s.Call(t, "set", json.RawMessage(`{"zone":"a.b","ttl":300,"records":[{"value":"v"}],"labels":{"k":"v"},"kind":"A"}`)); res.IsError {
		t.Errorf("valid arguments refused: %s", mcptest.Text(res))
	}
}

// TestValidationOfHugeArguments: hostile arguments get a short error that
// quotes a bounded prefix of the value, and a long array is refused on its
// length (the compiled validator's budget test, TestBudget, counts the work).
func TestValidationOfHugeArguments(t *testing.T) {
	s := validationServer(t)
	many := make([]map[string]string, 20_000)
	for i := range many {
		many[i] = map[string]string{"value": ""}
	}
	for name, args := range map[string]any{
		"512 KiB zone":    map[string]any{"zone": strings.Repeat("é", 256<<10)},
		"20k records":     map[string]any{"zone": "a", "records": many},
		"20k extra":       hugeObject(20_000),
		"512 KiB label":   map[string]any{"zone": "a", "labels": map[string]string{"k": strings.Repeat("x", 512<<10)}},
		"512 KiB in enum": map[string]any{"zone": "a", "kind": strings.Repeat("\u202e", 170<<10)},
	} {
		res := s.Call(t, "set", args)
		if text := mcptest.Text(res); !res.IsError || !strings.Contains(text, "invalid_argument") || len(text) > 600 {
			t.Errorf("%s: %d bytes: %.300s", name, len(text), text)
		}
	}
}

func hugeObject(n int) map[string]any {
	m := map[string]any{"zone": "a"}
	for i := range n {
		m[strings.Repeat("k", 40)+string(rune('a'+i%26))+strings.Repeat("z", i%64)+string(rune(0x4e00+i))] = []any{1, 2, 3}
	}
	return m
}

// TestNewRefusesUnsupportedSchemaKeyword: a schema keyword the compiled
// validator does not implement stops kernel.New with an error naming it and
// the tool — it is never silently left unchecked.
func TestNewRefusesUnsupportedSchemaKeyword(t *testing.T) {
	var schema jsonschema.Schema
	if err := json.Unmarshal([]byte(`{"type":"object","properties":{"a":{"type":"string"}},"unevaluatedProperties":false}`), &schema); err != nil {
		t.Fatal(err)
	}
	tool := kernel.NewDynamicTool(kernel.DynamicSpec{Name: "dyn", Description: "d.", Policy: readPolicy, Schema: &schema,
		Handle: func(context.Context, *kernel.Call, json.RawMessage) (any, error) { return map[string]any{}, nil }})
	_, err := kernel.New(kernel.Info{Name: "x"}, []kernel.Tool{tool}, nil)
	const want = "tool dyn: input schema: argcheck: unsupported schema keyword unevaluatedProperties at schema root"
	if err == nil || err.Error() != want {
		t.Fatalf("New = %v, want %q", err, want)
	}
}
