package kernel

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

type sjRecord struct {
	Value   string `json:"value" jsonschema:"a value <b>&</b>, \u2028 \"quoted\""`
	Comment string `json:"comment,omitempty" jsonschema:"ctl \b\f\n\r\t\x01\x1f\x7f \xff\xfe é 😀 \u2029 \\ '"`
}

type sjArgs struct {
	Zone    string            `json:"zone" jsonschema:"the zone"`
	TTL     *int              `json:"ttl,omitempty"`
	Ratio   float64           `json:"ratio,omitempty"`
	Records []sjRecord        `json:"records,omitempty"`
	Labels  map[string]string `json:"labels,omitempty"`
	Nested  struct {
		B bool   `json:"b"`
		A []bool `json:"a"`
	} `json:"nested"`
	Any any `json:"any,omitempty"`
}

// TestSchemaJSONMatchesLibrary: the encoder writes exactly the bytes
// jsonschema-go writes, for every real tool schema (the servers' committed
// snapshots), for inferred schemas (which carry a property order) refined
// with every keyword the encoder writes, and for schemas it leaves to the
// library (anyOf, $defs, const, false, x- keywords).
func TestSchemaJSONMatchesLibrary(t *testing.T) {
	var schemas []*jsonschema.Schema
	files, _ := filepath.Glob("../servers/*/testdata/toolsnaps/*.json")
	if len(files) < 50 {
		t.Fatalf("%d tool snapshots", len(files))
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var snap struct {
			InputSchema *jsonschema.Schema `json:"inputSchema"`
		}
		if err := json.Unmarshal(b, &snap); err != nil {
			t.Fatal(err)
		}
		schemas = append(schemas, snap.InputSchema)
	}
	inferred, err := jsonschema.For[sjArgs](nil)
	if err != nil {
		t.Fatal(err)
	}
	schemas = append(schemas, inferred)
	refined, _ := jsonschema.For[sjArgs](nil)
	refined.Title = "T<>"
	refined.MinProperties, refined.MaxProperties = ptr(1), ptr(9)
	refined.Properties["zone"].Pattern = `^[a-z<>&]+$`
	refined.Properties["zone"].MinLength, refined.Properties["zone"].MaxLength = ptr(1), ptr(253)
	refined.Properties["ttl"].Types, refined.Properties["ttl"].Type = []string{"null", "integer"}, ""
	refined.Properties["ttl"].Minimum, refined.Properties["ttl"].Maximum = ptr(60.0), ptr(2147483647.0)
	refined.Properties["ratio"].Minimum, refined.Properties["ratio"].Maximum = ptr(1e-7), ptr(1e21)
	refined.Properties["records"].MinItems, refined.Properties["records"].MaxItems = ptr(0), ptr(1000)
	refined.Properties["labels"].AdditionalProperties = &jsonschema.Schema{Type: "string", MaxLength: ptr(320)}
	refined.Properties["any"].Enum = []any{"a", 1, nil, true, []any{"x"}}
	refined.PropertyOrder = []string{"nested", "nope", "zone", "any"}
	schemas = append(schemas, refined)
	for _, src := range []string{
		`{"type":"object","properties":{"a":{"anyOf":[{"type":"string"},{"type":"null"}]},"b":{"$ref":"#/$defs/b"},"c":{"const":3},"d":false,"e":true,"f":{"type":"string","x-mcp-header":"F"}},"$defs":{"b":{"type":"integer"}},"additionalProperties":false}`,
		`{"type":"object","properties":{}}`,
		`{"type":"object"}`,
		`{"type":"object","properties":{"x":{}}, "required":[]}`,
		`{"type":"object","properties":{"x":{"type":"string","default":"  d ","format":"email","description":"d"}}}`,
	} {
		var s jsonschema.Schema
		if err := json.Unmarshal([]byte(src), &s); err != nil {
			t.Fatal(err)
		}
		schemas = append(schemas, &s)
	}
	for i, s := range schemas {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		got, err := schemaJSON(s)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("schema %d:\n got %s\nwant %s", i, got, want)
		}
	}
}

// BenchmarkSchemaJSON compares, in one run, encoding one inferred tool
// schema with jsonschema-go and with schemaJSON.
func BenchmarkSchemaJSON(b *testing.B) {
	s, _ := jsonschema.For[sjArgs](nil)
	b.Run("library", func(b *testing.B) {
		for b.Loop() {
			_, _ = json.Marshal(s)
		}
	})
	b.Run("schemaJSON", func(b *testing.B) {
		for b.Loop() {
			_, _ = schemaJSON(s)
		}
	})
}
