package kernel_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/bulwarkmcp/bulwark/kernel"
)

// schemaGen builds a JSON schema from fuzz bytes, one decision a byte:
// which keywords, which values. Its keywords are every one jsonschema-go
// models, those the kernel's validator refuses among them, with values good
// and bad (a pattern Go cannot compile, a default its schema refuses, a
// $ref to nowhere), so that generated schemas reach every way a
// declaration can fail.
type schemaGen struct{ data []byte }

func (g *schemaGen) next() int {
	if len(g.data) == 0 {
		return 0
	}
	b := g.data[0]
	g.data = g.data[1:]
	return int(b)
}

func (g *schemaGen) pick(options ...any) any { return options[g.next()%len(options)] }

// names are the property names generated schemas use ("target" is the
// one the gated policy binds; confirmToken is the kernel's own).
var names = []any{"a", "b", "target", "confirmToken"}

// keywords are what a generated (sub)schema may hold, by name; sub
// generates a subschema.
var keywords = []struct {
	name  string
	value func(g *schemaGen, sub func() any) any
}{
	{"type", func(g *schemaGen, _ func() any) any {
		return g.pick("string", "integer", "number", "object", "array", "boolean", "null", "strin", []any{"string", "null"}, []any{})
	}},
	{"enum", func(g *schemaGen, _ func() any) any { return g.pick([]any{"x", 1}, []any{}, []any{nil, []any{1}}) }},
	{"const", func(g *schemaGen, _ func() any) any { return g.pick("x", 1.5, nil, map[string]any{"a": 1}) }},
	{"minimum", func(g *schemaGen, _ func() any) any { return g.pick(0, -1.5, 1e300) }},
	{"exclusiveMaximum", func(g *schemaGen, _ func() any) any { return g.pick(0, 10) }},
	{"multipleOf", func(g *schemaGen, _ func() any) any { return g.pick(0.5, 0, -2) }},
	{"minLength", func(g *schemaGen, _ func() any) any { return g.pick(1, -1, 0) }},
	{"maxItems", func(g *schemaGen, _ func() any) any { return g.pick(2, -3) }},
	{"pattern", func(g *schemaGen, _ func() any) any { return g.pick("^a+$", "(", "(?=x)", `\p{L}`, "[") }},
	{"format", func(g *schemaGen, _ func() any) any { return g.pick("email", "nonsense") }},
	{"default", func(g *schemaGen, _ func() any) any { return g.pick("d", 3, nil, []any{}, -1) }},
	{"required", func(g *schemaGen, _ func() any) any { return []any{g.pick(names...)} }},
	{"properties", func(g *schemaGen, sub func() any) any { return map[string]any{g.pick(names...).(string): sub()} }},
	{"patternProperties", func(g *schemaGen, sub func() any) any { return map[string]any{g.pick("^x", "(").(string): sub()} }},
	{"additionalProperties", func(g *schemaGen, sub func() any) any { return g.pick(false, true, sub()) }},
	{"propertyNames", func(g *schemaGen, sub func() any) any { return sub() }},
	{"items", func(g *schemaGen, sub func() any) any { return g.pick(sub(), []any{sub()}, []any{}) }},
	{"prefixItems", func(g *schemaGen, sub func() any) any { return []any{sub()} }},
	{"additionalItems", func(g *schemaGen, sub func() any) any { return g.pick(false, sub()) }},
	{"contains", func(g *schemaGen, sub func() any) any { return sub() }},
	{"minContains", func(g *schemaGen, _ func() any) any { return g.pick(1, -1) }},
	{"uniqueItems", func(g *schemaGen, _ func() any) any { return true }},
	{"dependencies", func(g *schemaGen, sub func() any) any { return map[string]any{"a": g.pick([]any{"b"}, sub())} }},
	{"dependentRequired", func(g *schemaGen, _ func() any) any { return map[string]any{"a": []any{"b"}} }},
	{"dependentSchemas", func(g *schemaGen, sub func() any) any { return map[string]any{"a": sub()} }},
	{"unevaluatedProperties", func(g *schemaGen, sub func() any) any { return g.pick(false, sub()) }},
	{"unevaluatedItems", func(g *schemaGen, sub func() any) any { return g.pick(false, sub()) }},
	{"allOf", func(g *schemaGen, sub func() any) any { return []any{sub()} }},
	{"anyOf", func(g *schemaGen, sub func() any) any { return []any{sub(), sub()} }},
	{"oneOf", func(g *schemaGen, sub func() any) any { return []any{sub()} }},
	{"not", func(g *schemaGen, sub func() any) any { return sub() }},
	{"if", func(g *schemaGen, sub func() any) any { return sub() }},
	{"then", func(g *schemaGen, sub func() any) any { return sub() }},
	{"else", func(g *schemaGen, sub func() any) any { return sub() }},
	{"$defs", func(g *schemaGen, sub func() any) any { return map[string]any{"x": sub()} }},
	{"definitions", func(g *schemaGen, sub func() any) any { return map[string]any{"x": sub()} }},
	{"$ref", func(g *schemaGen, _ func() any) any {
		return g.pick("#", "#/$defs/x", "#/definitions/x", "#/properties/a", "#/properties/confirmToken", "#A", "#nowhere",
			"https://example.com/s.json", "#/items/0", "#/dependencies/a")
	}},
	{"$anchor", func(g *schemaGen, _ func() any) any { return g.pick("A", "B") }},
	{"$id", func(g *schemaGen, _ func() any) any { return "https://example.com/x" }},
	{"$dynamicRef", func(g *schemaGen, _ func() any) any { return "#A" }},
	{"$dynamicAnchor", func(g *schemaGen, _ func() any) any { return "A" }},
	{"$vocabulary", func(g *schemaGen, _ func() any) any { return map[string]any{"https://example.com/v": true} }},
	{"$comment", func(g *schemaGen, _ func() any) any { return "c" }},
	{"x-mcp-header", func(g *schemaGen, _ func() any) any { return g.pick("Region", "region", "", "bad name", 5) }},
}

// maxGenDepth bounds the generated schema's nesting.
const maxGenDepth = 4

// schema is a (sub)schema of up to three keywords.
func (g *schemaGen) schema(depth int) any {
	if depth >= maxGenDepth || len(g.data) == 0 {
		return g.pick(map[string]any{}, map[string]any{"type": "string"}, true)
	}
	s := map[string]any{}
	for n := g.next() % 4; n > 0; n-- {
		kw := keywords[g.next()%len(keywords)]
		s[kw.name] = kw.value(g, func() any { return g.schema(depth + 1) })
	}
	return s
}

// root is the input schema of a tool: an object, perhaps of a draft.
func (g *schemaGen) root() map[string]any {
	s, _ := g.schema(0).(map[string]any)
	if s == nil {
		s = map[string]any{}
	}
	s["type"] = "object"
	if d := g.pick("", "", "http://json-schema.org/draft-07/schema#", "https://json-schema.org/draft/2020-12/schema", "https://example.com/mine"); d != "" {
		s["$schema"] = d
	}
	return s
}

// FuzzDeclarationCheck: whatever Tool.Validate accepts, New and AddTools
// accept, and whatever it refuses they refuse with the same error — over
// generated schemas, under a read-only policy and under a gate that binds
// an argument (its schema gains confirmToken).
func FuzzDeclarationCheck(f *testing.F) {
	f.Add([]byte{}, false)
	for i := range keywords {
		f.Add([]byte{1, byte(i), 0, 2, byte(i), 1, 0}, i%2 == 0)
	}
	f.Fuzz(func(t *testing.T, data []byte, gated bool) {
		g := &schemaGen{data: data}
		raw, err := json.Marshal(g.root())
		if err != nil {
			t.Fatal(err)
		}
		var schema jsonschema.Schema
		if json.Unmarshal(raw, &schema) != nil {
			return // not a schema jsonschema-go reads: no tool gets this far
		}
		policy := readPolicy
		if gated {
			policy = kernel.Policy{ReadOnly: kernel.No, Destructive: kernel.Yes, Idempotent: kernel.No, OpenWorld: kernel.No,
				Confirm: kernel.Always(kernel.Bind{Target: []string{"target"}}), Tier: kernel.Open}
		}
		tool := kernel.NewDynamicTool(kernel.DynamicSpec{Name: "gen", Description: "A generated tool.", Policy: policy, Schema: &schema,
			Handle: func(context.Context, *kernel.Call, json.RawMessage) (any, error) { return kernel.Text("ran"), nil }})
		verr := tool.Validate()
		_, nerr := kernel.New(kernel.Info{Name: "x"}, []kernel.Tool{tool}, nil)
		if !sameError(verr, nerr) {
			t.Fatalf("schema %s (gated %v):\nValidate %v\nNew      %v", raw, gated, verr, nerr)
		}
		ks, err := kernel.New(kernel.Info{Name: "x"}, nil, &kernel.Options{DynamicTools: true})
		if err != nil {
			t.Fatal(err)
		}
		if _, aerr := ks.AddTools(tool); !sameError(verr, aerr) {
			t.Fatalf("schema %s (gated %v):\nValidate %v\nAddTools %v", raw, gated, verr, aerr)
		}
	})
}
