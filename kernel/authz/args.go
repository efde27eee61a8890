package authz

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/cedar-policy/cedar-go/types"
	"github.com/google/jsonschema-go/jsonschema"
)

// The arguments of a call become context.arguments, a Cedar record typed
// from the tool's input schema: string -> String, integer -> Long, boolean
// -> Bool, an array of those -> a Set, an object with declared properties
// -> a record. A property that is not required is optional (a policy tests
// it with `has`). What Cedar cannot express — numbers with a fraction,
// free-form maps, arrays of mixed items — is left out of the context, and
// so out of the schema: a policy that names it fails validation at startup.

// cedarType is the Cedar type of one argument.
type cedarType interface {
	decl() string
	value(v any) (types.Value, error)
	// appendKey appends an encoding of v that determines value(v): two
	// values with the same encoding convert to the same Cedar value. ok is
	// false where value(v) would fail.
	appendKey(b []byte, v any) (_ []byte, ok bool)
	// check reports whether value(v) would succeed, without building it.
	check(v any) bool
}

type primType string

func (p primType) decl() string { return string(p) }

func (p primType) value(v any) (types.Value, error) {
	switch p {
	case "String":
		if s, ok := v.(string); ok {
			return types.String(s), nil
		}
	case "Bool":
		if b, ok := v.(bool); ok {
			return types.Boolean(b), nil
		}
	case "Long":
		if f, ok := v.(float64); ok && f == math.Trunc(f) && math.Abs(f) <= 1<<53 {
			return types.Long(int64(f)), nil
		}
	}
	return nil, fmt.Errorf("a %T where %s was expected", v, p)
}

func (p primType) appendKey(b []byte, v any) ([]byte, bool) {
	switch p {
	case "String":
		if s, ok := v.(string); ok {
			return appendKeyString(b, s), true
		}
	case "Bool":
		if x, ok := v.(bool); ok {
			return append(b, "ft"[boolIndex(x)]), true
		}
	case "Long":
		if f, ok := v.(float64); ok && f == math.Trunc(f) && math.Abs(f) <= 1<<53 {
			return append(appendKeyInt(b, int64(f)), ';'), true
		}
	}
	return b, false
}

func (p primType) check(v any) bool {
	switch p {
	case "String":
		_, ok := v.(string)
		return ok
	case "Bool":
		_, ok := v.(bool)
		return ok
	case "Long":
		f, ok := v.(float64)
		return ok && f == math.Trunc(f) && math.Abs(f) <= 1<<53
	}
	return false
}

func boolIndex(x bool) int {
	if x {
		return 1
	}
	return 0
}

// appendKeyString appends s, length first, so that no two strings in a
// sequence share an encoding.
func appendKeyString(b []byte, s string) []byte {
	return append(append(appendKeyInt(b, int64(len(s))), ':'), s...)
}

// appendKeyInt appends n in decimal (strconv.AppendInt).
func appendKeyInt(b []byte, n int64) []byte { return strconv.AppendInt(b, n, 10) }

type setType struct{ elem cedarType }

func (s setType) decl() string { return "Set<" + s.elem.decl() + ">" }

func (s setType) value(v any) (types.Value, error) {
	items, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("a %T where a set was expected", v)
	}
	out := make([]types.Value, len(items))
	for i, it := range items {
		cv, err := s.elem.value(it)
		if err != nil {
			return nil, err
		}
		out[i] = cv
	}
	return types.NewSet(out...), nil
}

func (s setType) check(v any) bool {
	items, ok := v.([]any)
	if !ok {
		return false
	}
	for _, it := range items {
		if !s.elem.check(it) {
			return false
		}
	}
	return true
}

func (s setType) appendKey(b []byte, v any) ([]byte, bool) {
	items, ok := v.([]any)
	if !ok {
		return b, false
	}
	b = append(appendKeyInt(b, int64(len(items))), '[')
	for _, it := range items {
		if b, ok = s.elem.appendKey(b, it); !ok {
			return b, false
		}
	}
	return b, true
}

type field struct {
	t        cedarType
	optional bool
}

type recordType struct {
	fields map[string]field
	names  []string // sorted
	list   []field  // fields[names[i]]
}

func newRecordType(fields map[string]field) recordType {
	names := make([]string, 0, len(fields))
	for n := range fields {
		names = append(names, n)
	}
	sort.Strings(names)
	list := make([]field, len(names))
	for i, n := range names {
		list[i] = fields[n]
	}
	return recordType{fields: fields, names: names, list: list}
}

func (r recordType) decl() string {
	var b strings.Builder
	b.WriteString("{ ")
	for i, n := range r.names {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Quote(n))
		if r.fields[n].optional {
			b.WriteString("?")
		}
		b.WriteString(": " + r.fields[n].t.decl())
	}
	b.WriteString(" }")
	return b.String()
}

// value converts a validated JSON object. Absent and null optional fields
// are left out; a required one that is missing is an error (deny).
func (r recordType) value(v any) (types.Value, error) {
	obj, ok := v.(map[string]any)
	if !ok && v != nil {
		return nil, fmt.Errorf("a %T where an object was expected", v)
	}
	m := make(types.RecordMap, len(r.names))
	for _, name := range r.names {
		f := r.fields[name]
		fv, present := obj[name]
		if !present || fv == nil {
			if !f.optional {
				return nil, fmt.Errorf("argument %q is missing", name)
			}
			continue
		}
		cv, err := f.t.value(fv)
		if err != nil {
			return nil, fmt.Errorf("argument %q: %w", name, err)
		}
		m[types.String(name)] = cv
	}
	return types.NewRecord(m), nil
}

func (r recordType) check(v any) bool {
	obj, ok := v.(map[string]any)
	if !ok && v != nil {
		return false
	}
	for i, name := range r.names {
		fv, present := obj[name]
		if !present || fv == nil {
			if !r.list[i].optional {
				return false
			}
			continue
		}
		if !r.list[i].t.check(fv) {
			return false
		}
	}
	return true
}

// only is r with just the named fields (those a policy reads); names r
// does not have are ignored.
func (r recordType) only(names map[string]bool) recordType {
	fields := map[string]field{}
	for n := range names {
		if f, ok := r.fields[n]; ok {
			fields[n] = f
		}
	}
	return newRecordType(fields)
}

func (r recordType) appendKey(b []byte, v any) ([]byte, bool) {
	obj, ok := v.(map[string]any)
	if !ok && v != nil {
		return b, false
	}
	b = append(b, '{')
	for i, name := range r.names {
		fv, present := obj[name]
		if !present || fv == nil {
			if !r.list[i].optional {
				return b, false
			}
			b = append(b, '-')
			continue
		}
		b = append(b, '+')
		if b, ok = r.list[i].t.appendKey(b, fv); !ok {
			return b, false
		}
	}
	return append(b, '}'), true
}

// argumentsType is the record type of a tool's arguments.
func argumentsType(s *jsonschema.Schema) recordType {
	r, ok := typeOf(s, 0).(recordType)
	if !ok {
		return newRecordType(nil)
	}
	return r
}

// maxDepth bounds nesting: deeper structure is left out.
const maxDepth = 4

func typeOf(s *jsonschema.Schema, depth int) cedarType {
	if s == nil || depth > maxDepth {
		return nil
	}
	switch schemaType(s) {
	case "string":
		return primType("String")
	case "integer":
		return primType("Long")
	case "boolean":
		return primType("Bool")
	case "array":
		if elem := typeOf(s.Items, depth+1); elem != nil {
			return setType{elem: elem}
		}
	case "object":
		if len(s.Properties) == 0 {
			return nil // a free-form map: not expressible as a record
		}
		fields := map[string]field{}
		for name, p := range s.Properties {
			if t := typeOf(p, depth+1); t != nil {
				fields[name] = field{t: t, optional: !slices.Contains(s.Required, name) || nullable(p)}
			}
		}
		return newRecordType(fields)
	}
	return nil
}

// schemaType is the one non-null type of s, or "".
func schemaType(s *jsonschema.Schema) string {
	if s.Type != "" {
		return s.Type
	}
	var t string
	for _, x := range s.Types {
		if x == "null" {
			continue
		}
		if t != "" {
			return ""
		}
		t = x
	}
	return t
}

func nullable(s *jsonschema.Schema) bool { return slices.Contains(s.Types, "null") }
