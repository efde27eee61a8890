package kernel_test

import (
	"context"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/mcptest"
)

// schemaTool is a read-only dynamic tool with the schema src.
func schemaTool(t testing.TB, name, src string) kernel.Tool {
	t.Helper()
	var s jsonschema.Schema
	if err := json.Unmarshal([]byte(src), &s); err != nil {
		t.Fatalf("%s: %v", src, err)
	}
	return kernel.NewDynamicTool(kernel.DynamicSpec{Name: name, Description: "A tool with a given schema.", Policy: readPolicy, Schema: &s,
		Handle: func(context.Context, *kernel.Call, json.RawMessage) (any, error) { return kernel.Text("ran"), nil }})
}

// refusedSchemas are schemas jsonschema-go reads and the kernel cannot
// register, by what the declaration error says: a keyword the argument
// validator does not implement, a schema jsonschema-go cannot encode, an
// x-mcp-header annotation the go-sdk refuses (its AddTool panicked in New).
var refusedSchemas = map[string]string{
	"x-mcp-header can only be applied": `{"type":"object","properties":{"o":{"type":"object","x-mcp-header":"X"}}}`,
	"duplicate x-mcp-header":           `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"X"},"b":{"type":"string","x-mcp-header":"x"}}}`,
	"both Defs and Definitions":        `{"type":"object","$defs":{"x":{}},"definitions":{"x":{}}}`,
	"unevaluatedProperties":            `{"type":"object","properties":{"a":{"type":"string"}},"unevaluatedProperties":false}`,
	"unevaluatedItems":                 `{"type":"object","properties":{"a":{"type":"array","unevaluatedItems":false}}}`,
	"$dynamicRef":                      `{"type":"object","properties":{"a":{"$dynamicRef":"#x"}}}`,
	"$dynamicAnchor":                   `{"type":"object","$dynamicAnchor":"x"}`,
	"$vocabulary":                      `{"type":"object","$vocabulary":{"https://example.com/v":true}}`,
	"$id below the root":               `{"type":"object","properties":{"a":{"$id":"https://example.com/a","type":"string"}}}`,
	"outside this schema":              `{"type":"object","properties":{"a":{"$ref":"https://example.com/s.json"}}}`,
	"dependencies":                     `{"type":"object","dependencies":{"a":["b"]}}`,
	"items (array form":                `{"type":"object","properties":{"a":{"type":"array","items":[{"type":"string"}]}}}`,
	"additionalItems":                  `{"type":"object","properties":{"a":{"type":"array","additionalItems":false}}}`,
}

// TestValidateReportsWhatNewReports: for a schema the argument validator
// cannot compile, Tool.Validate reports the very error New and AddTools
// stop at, so an embedder that filters with Validate (the gateway) never
// hands New a tool it refuses.
func TestValidateReportsWhatNewReports(t *testing.T) {
	for kw, src := range refusedSchemas {
		tool := schemaTool(t, "dyn", src)
		verr := tool.Validate()
		if verr == nil || !strings.Contains(verr.Error(), kw) {
			t.Errorf("%s: Validate = %v, want an error naming it", kw, verr)
			continue
		}
		_, nerr := kernel.New(kernel.Info{Name: "x"}, []kernel.Tool{tool}, nil)
		if !sameError(nerr, verr) {
			t.Errorf("%s: New = %v, Validate = %v", kw, nerr, verr)
		}
		ks, err := kernel.New(kernel.Info{Name: "x"}, nil, &kernel.Options{DynamicTools: true})
		if err != nil {
			t.Fatal(err)
		}
		if _, aerr := ks.AddTools(tool); !sameError(aerr, verr) {
			t.Errorf("%s: AddTools = %v, Validate = %v", kw, aerr, verr)
		}
	}
}

// TestAddToolsIsAllOrNothing: a batch with one tool the kernel cannot
// compile adds none of them — not the good tools before it either.
func TestAddToolsIsAllOrNothing(t *testing.T) {
	ks, err := kernel.New(kernel.Info{Name: "x"}, []kernel.Tool{runtimeTool("a", "A", true)}, &kernel.Options{DynamicTools: true})
	if err != nil {
		t.Fatal(err)
	}
	sess := mcptest.Connect(t, ks, nil)
	good, bad := runtimeTool("good", "G", true), schemaTool(t, "bad", refusedSchemas["unevaluatedProperties"])
	if _, err := ks.AddTools(good, bad); err == nil || !strings.Contains(err.Error(), "tool bad: input schema") {
		t.Fatalf("AddTools = %v, want the bad tool's declaration error", err)
	}
	if names := runtimeNames(t, sess); !slices.Equal(names, []string{"a"}) {
		t.Fatalf("after a refused batch the list is %v, want only [a]", names)
	}
	if res, err := sess.CallTool(context.Background(), &mcp.CallToolParams{Name: "good"}); err == nil {
		t.Fatalf("a tool of the refused batch answers: %s", mcptest.Text(res))
	}
}

// TestDraft07ArrayAndDependencyKeywordsAreChecked: draft-07's array form of
// items, additionalItems and dependencies compile, and calls are checked
// against them (not left unchecked).
func TestDraft07ArrayAndDependencyKeywordsAreChecked(t *testing.T) {
	tool := schemaTool(t, "d7", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object",
		"properties":{"a":{"type":"string"},"b":{"type":"integer"},
			"pair":{"type":"array","items":[{"type":"integer"},{"type":"string"}],"additionalItems":false}},
		"dependencies":{"a":["b"],"b":{"properties":{"a":{"maxLength":2}}}}}`)
	if err := tool.Validate(); err != nil {
		t.Fatal(err)
	}
	ks, err := kernel.New(kernel.Info{Name: "x"}, []kernel.Tool{tool}, nil)
	if err != nil {
		t.Fatal(err)
	}
	sess := mcptest.Connect(t, ks, nil)
	for args, want := range map[string]string{
		`{"a":"xy","b":1,"pair":[1,"s"]}`: "ran",
		`{"a":"xy"}`:                      `dependentRequired: "a" is present, so these are required: ["b"]`,
		`{"a":"xyz","b":1}`:               `argument "a": maxLength`,
		`{"pair":[1,"s",true]}`:           `argument "pair[]": not`,
		`{"pair":["s"]}`:                  `argument "pair[]": type`,
	} {
		var m map[string]any
		if err := json.Unmarshal([]byte(args), &m); err != nil {
			t.Fatal(err)
		}
		if got := mcptest.Text(sess.Call(t, "d7", m)); !strings.Contains(got, want) {
			t.Errorf("%s: %s, want %q", args, got, want)
		}
	}
}

// unstable matches what a declaration error may say differently from one
// run to the next: the addresses jsonschema-go's encoding errors print,
// and which of two properties the go-sdk names (it walks a map).
var unstable = regexp.MustCompile(`0x[0-9a-f]+|(invalid parameter header annotations: ).*`)

// sameError reports whether a and b are both nil or say the same but for
// what unstable matches.
func sameError(a, b error) bool {
	if a == nil || b == nil {
		return a == b
	}
	return unstable.ReplaceAllString(a.Error(), "$1") == unstable.ReplaceAllString(b.Error(), "$1")
}
