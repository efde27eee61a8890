package llm

import (
	"encoding/json"
	"strings"
)

// maxDepth bounds how deep Instance and Violations walk a schema, so a
// hostile or cyclic-looking schema costs bounded work.
const maxDepth = 16

// schema is the subset of JSON Schema the fake understands: enough to
// produce an instance of the per-tool schemas of an enrichment and to
// break one.
type schema struct {
	Type                 json.RawMessage    `json:"type"`
	Properties           map[string]*schema `json:"properties"`
	Required             []string           `json:"required"`
	AdditionalProperties json.RawMessage    `json:"additionalProperties"`
	Items                *schema            `json:"items"`
	Enum                 []json.RawMessage  `json:"enum"`
	Const                json.RawMessage    `json:"const"`
	MinItems             *int               `json:"minItems"`
	MaxLength            *int               `json:"maxLength"`
	MinLength            *int               `json:"minLength"`
	Minimum              *float64           `json:"minimum"`
	Maximum              *float64           `json:"maximum"`
	AnyOf                []*schema          `json:"anyOf"`
	OneOf                []*schema          `json:"oneOf"`
}

func parseSchema(raw json.RawMessage) *schema {
	var s schema
	if len(raw) == 0 || json.Unmarshal(raw, &s) != nil {
		return &schema{}
	}
	return &s
}

// typ is the schema's first non-null type ("" when it has none).
func (s *schema) typ() string {
	var one string
	if json.Unmarshal(s.Type, &one) == nil {
		return one
	}
	var many []string
	_ = json.Unmarshal(s.Type, &many)
	for _, t := range many {
		if t != "null" {
			return t
		}
	}
	if len(s.Properties) > 0 {
		return "object"
	}
	return ""
}

func (s *schema) closed() bool { return strings.TrimSpace(string(s.AdditionalProperties)) == "false" }

// sortedKeys returns the property names in a fixed order.
func (s *schema) sortedKeys() []string {
	keys := make([]string, 0, len(s.Properties))
	for k := range s.Properties {
		keys = append(keys, k)
	}
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	return keys
}

// Instance returns a small JSON value valid against schema (the subset
// above: type, properties, required, items, enum, const, minItems up to 8,
// minLength up to 256, maxLength, minimum/maximum, anyOf/oneOf). text fills
// the strings. Work is bounded: 16 levels, 4096 values.
func Instance(raw json.RawMessage, text string) json.RawMessage {
	b, _ := json.Marshal(instance(parseSchema(raw), text, 0))
	return b
}

// maxNodes bounds the values one instance holds (nested minItems would
// otherwise multiply).
const maxNodes = 4096

func instance(s *schema, text string, depth int) any {
	left := maxNodes
	return gen(s, text, depth, &left)
}

func gen(s *schema, text string, depth int, left *int) any {
	*left--
	if s == nil || depth > maxDepth || *left < 0 {
		return nil
	}
	if len(s.Const) > 0 {
		return s.Const
	}
	if len(s.Enum) > 0 {
		return s.Enum[0]
	}
	if alt := append(append([]*schema(nil), s.AnyOf...), s.OneOf...); len(alt) > 0 {
		return gen(alt[0], text, depth+1, left)
	}
	switch s.typ() {
	case "object":
		out := map[string]any{}
		for _, k := range s.sortedKeys() {
			out[k] = gen(s.Properties[k], text, depth+1, left)
		}
		return out
	case "array":
		n := 1
		if s.MinItems != nil && *s.MinItems > 1 {
			n = min(*s.MinItems, 8)
		}
		out := make([]any, n)
		for i := range out {
			out[i] = gen(s.Items, text, depth+1, left)
		}
		return out
	case "string":
		return fitString(s, text)
	case "integer":
		return int64(number(s))
	case "number":
		return number(s)
	case "boolean":
		return true
	case "null":
		return nil
	}
	return text
}

func fitString(s *schema, text string) string {
	if s.MinLength != nil && len([]rune(text)) < *s.MinLength {
		text += strings.Repeat(".", min(*s.MinLength, 256)-len([]rune(text)))
	}
	if s.MaxLength != nil && len([]rune(text)) > *s.MaxLength {
		text = string([]rune(text)[:max(*s.MaxLength, 0)])
	}
	return text
}

func number(s *schema) float64 {
	v := 1.0
	if s.Minimum != nil && v < *s.Minimum {
		v = *s.Minimum
	}
	if s.Maximum != nil && v > *s.Maximum {
		v = *s.Maximum
	}
	return v
}

// Violations returns JSON documents that each break schema in one way:
// the wrong root type, a missing required property, a property of the wrong
// type, an extra property where additionalProperties is false, a value
// outside an enum, a string over maxLength. Only the ways the schema allows
// are listed; the wrong root type always is (when the schema has a type).
func Violations(raw json.RawMessage, text string) []json.RawMessage {
	s := parseSchema(raw)
	var out []json.RawMessage
	add := func(v any) {
		b, _ := json.Marshal(v)
		out = append(out, b)
	}
	switch s.typ() {
	case "object":
		add([]string{"not", "an", "object"})
	case "":
	default:
		add(map[string]any{"not": "a " + s.typ()})
	}
	if s.typ() != "object" {
		return out
	}
	valid := func() map[string]any { m, _ := instance(s, text, 0).(map[string]any); return m }
	if len(s.Required) > 0 {
		m := valid()
		delete(m, s.Required[0])
		add(m)
	}
	for _, k := range s.sortedKeys() {
		switch s.Properties[k].typ() {
		case "":
		case "string":
			m := valid()
			m[k] = 42
			add(m)
		default:
			m := valid()
			m[k] = "wrong type"
			add(m)
		}
		if p := s.Properties[k]; len(p.Enum) > 0 {
			m := valid()
			m[k] = "not-in-the-enum"
			add(m)
		}
		if p := s.Properties[k]; p.MaxLength != nil && *p.MaxLength < 1<<20 {
			m := valid()
			m[k] = strings.Repeat("x", *p.MaxLength+1)
			add(m)
		}
	}
	if s.closed() {
		m := valid()
		m["injected_extra"] = "not in the schema"
		add(m)
	}
	return out
}
