package kernel

import (
	"bytes"
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"strconv"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/bulwarkmcp/bulwark/kernel/internal/jsonscan"
)

// schemaJSON encodes a tool's input schema once, at registration, to the
// bytes jsonschema-go's MarshalJSON writes (TestSchemaJSONMatchesLibrary
// compares them for every real tool schema). The go-sdk's AddTool
// marshals the schema it is given to look for x-mcp-header annotations, and
// its tools/list marshals it again on every request; jsonschema-go's
// encoder walks each node by reflection and was most of the cost of
// registering 23 tools at start-up. Handing the SDK the encoded bytes makes
// both a copy. A node that uses a keyword this encoder does not write is
// encoded by the library itself, so the bytes are always the library's.
func schemaJSON(s *jsonschema.Schema) (json.RawMessage, error) {
	var b bytes.Buffer
	if err := writeSchema(&b, s); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// covered zeroes the fields writeSchema writes; what remains must be zero
// for the node to be written here rather than by the library.
func covered(s *jsonschema.Schema) bool {
	c := *s
	c.Type, c.Types, c.Properties, c.PropertyOrder, c.Items = "", nil, nil, nil, nil
	c.Title, c.Description, c.Enum, c.Pattern, c.Required = "", "", nil, "", nil
	c.Minimum, c.Maximum, c.MinLength, c.MaxLength, c.MinItems, c.MaxItems = nil, nil, nil, nil, nil, nil
	c.MinProperties, c.MaxProperties, c.AdditionalProperties = nil, nil, nil
	seen := make(map[string]bool, len(s.PropertyOrder))
	for _, name := range s.PropertyOrder {
		if seen[name] {
			return false // the library refuses it
		}
		seen[name] = true
	}
	return reflect.ValueOf(c).IsZero()
}

func writeSchema(b *bytes.Buffer, s *jsonschema.Schema) error {
	if s == nil {
		b.WriteString("null")
		return nil
	}
	if isFalseSchema(s) {
		b.WriteString("false") // {"not": {}}, the schema false
		return nil
	}
	if !covered(s) || (s.Type != "" && s.Types != nil) {
		raw, err := json.Marshal(s)
		if err != nil {
			return err
		}
		b.Write(raw)
		return nil
	}
	start := b.Len()
	b.WriteByte('{')
	f := fields{b: b}
	switch {
	case s.Type != "":
		f.key("type")
		f.str(s.Type)
	case s.Types != nil:
		f.key("type")
		f.value(s.Types)
	}
	if s.Properties != nil {
		f.key("properties")
		if err := writeProperties(b, s); err != nil {
			return err
		}
	}
	if s.Items != nil {
		f.key("items")
		if err := writeSchema(b, s.Items); err != nil {
			return err
		}
	}
	if s.Title != "" {
		f.key("title")
		f.str(s.Title)
	}
	if s.Description != "" {
		f.key("description")
		f.str(s.Description)
	}
	if len(s.Enum) > 0 {
		f.key("enum")
		f.value(s.Enum)
	}
	f.float("minimum", s.Minimum)
	f.float("maximum", s.Maximum)
	f.int("minLength", s.MinLength)
	f.int("maxLength", s.MaxLength)
	if s.Pattern != "" {
		f.key("pattern")
		f.str(s.Pattern)
	}
	f.int("minItems", s.MinItems)
	f.int("maxItems", s.MaxItems)
	f.int("minProperties", s.MinProperties)
	f.int("maxProperties", s.MaxProperties)
	if len(s.Required) > 0 {
		f.key("required")
		f.value(s.Required)
	}
	if s.AdditionalProperties != nil {
		f.key("additionalProperties")
		if err := writeSchema(b, s.AdditionalProperties); err != nil {
			return err
		}
	}
	if f.err != nil {
		return f.err
	}
	b.WriteByte('}')
	if b.Len()-start == 2 { // {} is the schema true
		b.Truncate(start)
		b.WriteString("true")
	}
	return nil
}

// isFalseSchema reports {"not": {}} and nothing else: the schema false.
func isFalseSchema(s *jsonschema.Schema) bool {
	if s.Not == nil || !reflect.ValueOf(*s.Not).IsZero() {
		return false
	}
	c := *s
	c.Not = nil
	return reflect.ValueOf(c).IsZero()
}

// writeProperties writes the names in PropertyOrder first, then the others
// sorted, as the library does.
func writeProperties(b *bytes.Buffer, s *jsonschema.Schema) error {
	b.WriteByte('{')
	f := fields{b: b}
	done := make(map[string]bool, len(s.Properties))
	write := func(name string) error {
		f.key(name)
		done[name] = true
		return writeSchema(b, s.Properties[name])
	}
	for _, name := range s.PropertyOrder {
		if _, ok := s.Properties[name]; ok && !done[name] {
			if err := write(name); err != nil {
				return err
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(s.Properties)) {
		if !done[name] {
			if err := write(name); err != nil {
				return err
			}
		}
	}
	b.WriteByte('}')
	return f.err
}

// fields writes the members of one object, commas between them.
type fields struct {
	b   *bytes.Buffer
	n   int
	err error
}

func (f *fields) key(k string) {
	if f.n > 0 {
		f.b.WriteByte(',')
	}
	f.n++
	f.str(k)
	f.b.WriteByte(':')
}

// str writes a string as encoding/json does (HTML characters escaped).
func (f *fields) str(s string) { f.b.Write(jsonscan.AppendHTMLString(f.b.AvailableBuffer(), s)) }

func (f *fields) value(v any) {
	raw, err := json.Marshal(v)
	if err != nil && f.err == nil {
		f.err = err
	}
	f.b.Write(raw)
}

func (f *fields) int(k string, p *int) {
	if p != nil {
		f.key(k)
		f.b.WriteString(strconv.Itoa(*p))
	}
}

func (f *fields) float(k string, p *float64) {
	if p != nil {
		f.key(k)
		f.value(*p)
	}
}
