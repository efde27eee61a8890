package llm

import (
	"encoding/json"
	"testing"
)

// FuzzSchema: Instance and Violations never panic, always return JSON, and
// stay small for any schema (bounded depth, minItems capped).
func FuzzSchema(f *testing.F) {
	for _, s := range []string{enrichSchema, `{}`, `{"type":["null","string"],"maxLength":3}`,
		`{"type":"array","minItems":100000,"items":{"type":"array","minItems":100000}}`,
		`{"anyOf":[{"type":"integer","minimum":5}]}`, `{"type":"object","properties":{"a":{"$ref":"#"}}}`,
		`{"type":"string","minLength":-1,"maxLength":-5}`, `[1,2]`, `{"enum":[]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if len(raw) > 4096 {
			return
		}
		v := Instance(raw, "text")
		if !json.Valid(v) {
			t.Fatalf("instance not JSON: %s", v)
		}
		if len(v) > 1<<20 {
			t.Fatalf("instance of %d bytes from a %d-byte schema", len(v), len(raw))
		}
		for _, x := range Violations(raw, "text") {
			if !json.Valid(x) {
				t.Fatalf("violation not JSON: %s", x)
			}
		}
	})
}
