package argcheck

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// toolSchemas are the wire input schemas of every real tool (the servers'
// committed tool snapshots) and a schema that uses every keyword the
// validator supports beyond them.
func toolSchemas(t testing.TB) (names []string, schemas []*jsonschema.Schema) {
	t.Helper()
	files, err := filepath.Glob("../../../servers/*/testdata/toolsnaps/*.json")
	if err != nil || len(files) < 50 {
		t.Fatalf("tool snapshots: %d files, %v", len(files), err)
	}
	slices.Sort(files)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var snap struct {
			InputSchema *jsonschema.Schema `json:"inputSchema"`
		}
		if err := json.Unmarshal(b, &snap); err != nil || snap.InputSchema == nil {
			t.Fatalf("%s: %v", f, err)
		}
		names = append(names, filepath.Base(f))
		schemas = append(schemas, snap.InputSchema)
	}
	for i, src := range []string{everyKeyword, draft7Schema} {
		var s jsonschema.Schema
		if err := json.Unmarshal([]byte(src), &s); err != nil {
			t.Fatal(err)
		}
		names = append(names, []string{"everyKeyword", "draft7"}[i])
		schemas = append(schemas, &s)
	}
	return names, schemas
}

const everyKeyword = `{
  "type": "object",
  "$defs": {"addr": {"$anchor": "A", "type": "object", "properties": {"city": {"type": "string", "minLength": 1}}, "required": ["city"]}},
  "properties": {
    "home": {"$ref": "#/$defs/addr"},
    "work": {"$ref": "#A"},
    "kind": {"const": "x"},
    "n": {"type": "number", "multipleOf": 0.5, "exclusiveMinimum": 0, "exclusiveMaximum": 100},
    "tags": {"type": "array", "uniqueItems": true, "contains": {"type": "string", "pattern": "^t"}, "maxContains": 2, "maxItems": 6},
    "pair": {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}], "items": {"type": "boolean"}},
    "pick": {"oneOf": [{"type": "integer"}, {"type": "number", "minimum": 5}]},
    "any": {"anyOf": [{"type": "string"}, {"type": "null"}]},
    "nope": {"not": {"type": "string"}},
    "obj": {"type": "object", "patternProperties": {"^x-": {"type": "integer"}}, "additionalProperties": {"type": "string", "maxLength": 3},
            "propertyNames": {"maxLength": 5}, "minProperties": 1, "maxProperties": 4},
    "e": {"enum": [1, "one", [1, 2], {"a": null}, true, null]},
    "deep": {"type": "object", "properties": {"inner": {"type": "object", "properties": {"v": {"type": "integer", "default": 3}}}}},
    "opt": {"type": "string", "default": "d"}
  },
  "dependentRequired": {"home": ["work"]},
  "dependentSchemas": {"kind": {"required": ["n"]}},
  "allOf": [{"anyOf": [{"required": ["home"]}, {"required": ["kind"]}, {"required": ["e"]}]}],
  "if": {"properties": {"kind": {"const": "x"}}, "required": ["kind"]},
  "then": {"required": ["pick"]},
  "else": {"properties": {"pick": {"type": "integer"}}}
}`

const draft7Schema = `{
  "$schema": "http://json-schema.org/draft-07/schema#",
  "type": "object",
  "definitions": {"s": {"type": "string", "maxLength": 4}},
  "properties": {
    "a": {"$ref": "#/definitions/s", "minLength": 3}, "b": {"type": ["integer", "null"], "maximum": 9},
    "t": {"type": "array", "items": [{"type": "integer"}, {"$ref": "#/definitions/s"}], "additionalItems": {"type": "boolean"}},
    "u": {"type": "array", "items": [{"type": "string"}]},
    "v": {"items": {"type": "integer"}, "additionalItems": false},
    "w": {"$ref": "#/properties/t/items/0"},
    "x": {"additionalItems": false}
  },
  "dependencies": {"a": ["b"], "b": {"properties": {"t": {"maxItems": 2}}}, "x": {"$ref": "#/dependencies/b"}},
  "additionalProperties": false
}`

// seedArgs are argument objects the fuzzer starts from: valid calls of
// several tools, near misses, and values of every JSON type.
var seedArgs = []string{
	`{}`, `null`, `[]`, `"s"`, `1.5`,
	`{"zone":"example.com"}`,
	`{"zone":"example.com","name":"www","type":"A","records":[{"value":"198.51.100.7"}],"ttl":300}`,
	`{"zone":"example.com","name":"www","type":"A","records":[{"value":"198.51.100.7","comment":"c","x":1}],"ttl":59}`,
	`{"zone":"EXAMPLE..com","name":"","type":"Q","records":[],"ttl":3600.5}`,
	`{"zone":"example.com","labels":{"env":"prod","team":"` + strings.Repeat("x", 400) + `"}}`,
	`{"id":"pad","text":"hello","confirmToken":"t"}`,
	`{"query":"CVE-2024-1234","limit":10,"page":null}`,
	`{"home":{"city":"X"},"work":{"city":""},"kind":"x","n":2.5,"pick":7}`,
	`{"e":[1,2],"tags":["ta","tb","ta"],"pair":[1,"s",true,false],"obj":{"x-a":1,"b":"abc","toolong":"x"}}`,
	`{"e":{"a":null},"nope":"s","any":3,"deep":{},"a":"abcde","b":10}`,
	`{"a":"abc","b":1,"t":[1,"ab"],"u":["x",1],"v":[1,2],"w":3,"x":[1]}`, `{"a":"abc","t":[1,"ab",true]}`,
	`{"b":1,"t":[1,"ab",true]}`, `{"t":[1,"ab",true,1]}`, `{"u":[1],"v":[1,"s"],"w":1.5,"x":[1,2,3],"t":[]}`,
	`{"e":null,"tags":["ta",0,-0]}`, `{"e":true,"tags":["ta",{"a":[1,{"b":-0}]},{"a":[1,{"b":0}]}]}`, `{"e":"one","tags":["t",1,"1",null,false]}`,
}

func resolve(t testing.TB, s *jsonschema.Schema) *jsonschema.Resolved {
	t.Helper()
	r, err := s.Resolve(&jsonschema.ResolveOptions{ValidateDefaults: true})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// FuzzCompiledValidatorAgrees: for every real tool schema, the compiled
// validator accepts exactly the arguments jsonschema-go accepts, and fills
// in the same defaults.
func FuzzCompiledValidatorAgrees(f *testing.F) {
	names, schemas := toolSchemas(f)
	libs := make([]*jsonschema.Resolved, len(schemas))
	compiled := make([]*Validator, len(schemas))
	for i, s := range schemas {
		libs[i] = resolve(f, s)
		v, err := Compile(s)
		if err != nil {
			f.Fatalf("%s: %v", names[i], err)
		}
		compiled[i] = v
	}
	for i, a := range seedArgs {
		f.Add(uint8(i), a)
	}
	f.Fuzz(func(t *testing.T, pick uint8, raw string) {
		var probe any
		if json.Unmarshal([]byte(raw), &probe) != nil {
			return
		}
		// A few schemas for each input, chosen by pick, and always the one
		// that uses every keyword.
		for _, i := range []int{int(pick) % len(schemas), (int(pick) * 7) % len(schemas), len(schemas) - 2, len(schemas) - 1} {
			agree(t, names[i], libs[i], compiled[i], raw)
		}
	})
}

func agree(t *testing.T, name string, lib *jsonschema.Resolved, v *Validator, raw string) (accepted bool) {
	t.Helper()
	var a, b any
	_ = json.Unmarshal([]byte(raw), &a)
	_ = json.Unmarshal([]byte(raw), &b)
	if m, ok := a.(map[string]any); ok {
		if err := lib.ApplyDefaults(&m); err != nil {
			return false // the library refuses to apply; the kernel never gets here with a non-object
		}
		if err := v.ApplyDefaults(b.(map[string]any)); err != nil {
			t.Fatalf("%s: ApplyDefaults(%s): %v", name, raw, err)
		}
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("%s: defaults differ for %s:\nlibrary  %v\ncompiled %v", name, raw, a, b)
		}
	}
	libErr := lib.Validate(a)
	f := v.Validate(b)
	if (libErr == nil) != (f == nil) {
		t.Fatalf("%s: %s:\nlibrary  %v\ncompiled %+v", name, raw, libErr, f)
	}
	return f == nil
}

// TestSeedsAgree runs the seeds against every schema, not only the ones the
// fuzzer picks.
func TestSeedsAgree(t *testing.T) {
	names, schemas := toolSchemas(t)
	var accepted, refused int
	for i, s := range schemas {
		v, err := Compile(s)
		if err != nil {
			t.Fatalf("%s: %v", names[i], err)
		}
		lib := resolve(t, s)
		for _, raw := range seedArgs {
			if agree(t, names[i], lib, v, raw) {
				accepted++
			} else {
				refused++
			}
		}
	}
	if accepted < 20 || refused < 20 {
		t.Errorf("the seeds exercise too little: %d accepted, %d refused", accepted, refused)
	}
}

// TestCompileRefusesUnsupportedKeywords: a keyword the validator does not
// implement stops compilation, naming it; it is never silently accepted.
func TestCompileRefusesUnsupportedKeywords(t *testing.T) {
	for _, c := range []struct{ schema, want string }{
		{`{"type":"object","unevaluatedProperties":false}`, "unevaluatedProperties at schema root"},
		{`{"type":"object","properties":{"a":{"type":"array","unevaluatedItems":false}}}`, "unevaluatedItems at schema /properties/a"},
		{`{"type":"object","properties":{"a":{"$dynamicRef":"#x"}}}`, "$dynamicRef"},
		{`{"type":"object","$dynamicAnchor":"x"}`, "$dynamicAnchor"},
		{`{"type":"object","properties":{"a":{"$ref":"https://example.com/s.json"}}}`, "outside this schema"},
		{`{"type":"object","properties":{"a":{"$id":"https://example.com/a","type":"string"}}}`, "$id below the root"},
		// draft-07's keywords in a draft 2020-12 schema, which jsonschema-go
		// ignores there: refused, not left unchecked.
		{`{"type":"object","properties":{"a":{"items":[{"type":"string"}]}}}`, "items (array form, a draft-07 keyword)"},
		{`{"type":"object","properties":{"a":{"additionalItems":false}}}`, "additionalItems (a draft-07 keyword)"},
		{`{"type":"object","dependencies":{"a":["b"]}}`, "dependencies (a draft-07 keyword)"},
		{`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","dependencies":{"a":{"required":["b"]}}}`, "dependencies"},
		{`{"type":"object","$vocabulary":{"https://example.com/v":true}}`, "$vocabulary"},
	} {
		var s jsonschema.Schema
		if err := json.Unmarshal([]byte(c.schema), &s); err != nil {
			t.Fatalf("%s: %v", c.schema, err)
		}
		_, err := Compile(&s)
		if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Compile = %v, want ErrUnsupported naming %q", c.schema, err, c.want)
		}
	}
	for _, c := range []struct{ schema, want string }{
		{`{"type":"object","properties":{"a":{"pattern":"("}}}`, "pattern"},
		{`{"type":"object","properties":{"a":{"type":"strin"}}}`, `unknown type "strin"`},
		{`{"type":"object","properties":{"a":{"$ref":"#/$defs/none"}}}`, "no such subschema"},
		{`{"type":"object","properties":{"a":{"$ref":"#nowhere"}}}`, "no such $anchor"},
		{`{"type":"object","properties":{"a":{"type":"integer","minimum":1,"default":0}}}`, "default 0: minimum"},
		{`{"$schema":"https://example.com/mine","type":"object"}`, "only draft 2020-12 and draft-07"},
	} {
		var s jsonschema.Schema
		if err := json.Unmarshal([]byte(c.schema), &s); err != nil {
			t.Fatalf("%s: %v", c.schema, err)
		}
		if _, err := Compile(&s); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Compile = %v, want %q", c.schema, err, c.want)
		}
	}
}

// TestFailureIsStructured: the failure says where and which rule as data.
func TestFailureIsStructured(t *testing.T) {
	_, schemas := toolSchemas(t)
	v, err := Compile(schemas[len(schemas)-2])
	if err != nil {
		t.Fatal(err)
	}
	var args any
	_ = json.Unmarshal([]byte(`{"e":1,"pair":[1,"s",true,"no"]}`), &args)
	f := v.Validate(args)
	want := &Failure{Path: []Step{{Name: "pair", Index: -1}, {Index: 3}}, Rule: "type", Detail: `"no" has type "string", want "boolean"`}
	if !reflect.DeepEqual(f, want) {
		t.Fatalf("Validate = %+v, want %+v", f, want)
	}
}

// TestBudget: hostile arguments cost work bounded by the schema, not by
// their size: a long array is refused on its length before any item is
// checked, a huge object on its extra names without visiting their values,
// a self-referencing schema stops at MaxDepth, and a failure quotes a
// bounded prefix of a huge value.
func TestBudget(t *testing.T) {
	schema := func(src string) *Validator {
		var s jsonschema.Schema
		if err := json.Unmarshal([]byte(src), &s); err != nil {
			t.Fatal(err)
		}
		v, err := Compile(&s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	run := func(v *Validator, val any) (*Failure, int) {
		st := &state{}
		return st.check(v.root, val), st.visits
	}
	items := make([]any, 200_000)
	for i := range items {
		items[i] = map[string]any{"value": "x"}
	}
	v := schema(`{"type":"object","properties":{"records":{"type":"array","maxItems":1000,"items":{"type":"object","properties":{"value":{"type":"string","maxLength":10}}}}}}`)
	if f, n := run(v, map[string]any{"records": items}); f == nil || f.Rule != "maxItems" || n > 3 {
		t.Errorf("200k items: %+v after %d visits", f, n)
	}
	extra := map[string]any{}
	for i := range 20_000 {
		extra[strings.Repeat("k", 10)+string(rune('a'+i%26))+strings.Repeat("z", i%50)+string(rune(i))] = map[string]any{"deep": []any{1.0}}
	}
	v = schema(`{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":false}`)
	if f, n := run(v, extra); f == nil || f.Rule != "additionalProperties" || n > 1 || len(f.Message()) > 400 {
		t.Errorf("20k unexpected properties: rule %v after %d visits, message %d bytes", f.Rule, n, len(f.Message()))
	}
	v = schema(`{"type":"object","properties":{"a":{"$ref":"#/properties/a"}}}`)
	if f, _ := run(v, map[string]any{"a": 1.0}); f == nil || f.Rule != "depth" {
		t.Errorf("a $ref cycle: %+v", f)
	}
	v = schema(`{"$defs":{"n":{"type":"array","items":{"$ref":"#/$defs/n"}}},"type":"object","properties":{"t":{"$ref":"#/$defs/n"}}}`)
	var deep any = []any{}
	for range 5000 {
		deep = []any{deep}
	}
	if f, n := run(v, map[string]any{"t": deep}); f == nil || f.Rule != "depth" || n > MaxDepth+1 {
		t.Errorf("a value nested 5000 deep under a recursive schema: %+v after %d visits", f, n)
	}
	v = schema(`{"type":"object","properties":{"s":{"type":"string","maxLength":5}}}`)
	if f, _ := run(v, map[string]any{"s": strings.Repeat("é", 2<<20)}); f == nil || len(f.Detail) > 200 {
		t.Errorf("a 4 MiB string: detail of %d bytes", len(f.Detail))
	}
}

// BenchmarkArgumentValidation compares, in one run, validating one
// add_records call with jsonschema-go (ApplyDefaults + Validate on the
// resolved schema, as the kernel did) and with the compiled validator.
func BenchmarkArgumentValidation(b *testing.B) {
	raw, err := os.ReadFile("../../../servers/dns/testdata/toolsnaps/add_records.json")
	if err != nil {
		b.Fatal(err)
	}
	var snap struct {
		InputSchema *jsonschema.Schema `json:"inputSchema"`
	}
	if err := json.Unmarshal(raw, &snap); err != nil {
		b.Fatal(err)
	}
	args := func() map[string]any {
		var m map[string]any
		_ = json.Unmarshal([]byte(`{"zone":"example.com","name":"www","type":"A","ttl":300,"records":[{"value":"198.51.100.7","comment":"web"},{"value":"198.51.100.8"}]}`), &m)
		return m
	}
	lib := resolve(b, snap.InputSchema)
	v, err := Compile(snap.InputSchema)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("library", func(b *testing.B) {
		m := args()
		for b.Loop() {
			if lib.ApplyDefaults(&m) != nil || lib.Validate(m) != nil {
				b.Fatal("refused")
			}
		}
	})
	b.Run("compiled", func(b *testing.B) {
		m := args()
		for b.Loop() {
			if v.ApplyDefaults(m) != nil || v.Validate(m) != nil {
				b.Fatal("refused")
			}
		}
	})
}

// BenchmarkCompile compares, in one run, preparing every real tool schema
// for validation: jsonschema-go's Resolve (what registration did) and Compile.
func BenchmarkCompile(b *testing.B) {
	_, schemas := toolSchemas(b)
	b.Run("library", func(b *testing.B) {
		for b.Loop() {
			for _, s := range schemas {
				if _, err := s.Resolve(&jsonschema.ResolveOptions{ValidateDefaults: true}); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("compiled", func(b *testing.B) {
		for b.Loop() {
			for _, s := range schemas {
				if _, err := Compile(s); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}
