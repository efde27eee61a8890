// Package argcheck is the kernel's argument validator: a tool's input schema
// compiled once, when the server is built, into a tree of checks that
// validates a decoded JSON value without reflection and reports the first
// failure as data — where (the argument's path), which rule, and a short
// detail — so that nobody parses a library's message strings.
//
// It accepts and refuses exactly what github.com/google/jsonschema-go
// accepts and refuses for the keywords it supports (FuzzCompiledValidatorAgrees
// holds it to that). A schema that uses a keyword it does not support is
// refused by Compile, never silently accepted: see Compile for the list.
package argcheck

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// ErrUnsupported is wrapped by Compile's error for a schema keyword the
// validator does not implement.
var ErrUnsupported = errors.New("argcheck: unsupported schema keyword")

// Validator is a compiled schema. It is safe for concurrent use.
type Validator struct {
	root *node
}

// node is one compiled (sub)schema.
type node struct {
	ref     *node
	refOnly bool // draft-07: the keywords beside $ref are ignored

	types []string // nil: any type
	enum  []any
	cnst  *any

	multipleOf, minimum, maximum, exMinimum, exMaximum *float64

	minLength, maxLength *int
	pattern              *pattern

	prefixItems                     []*node
	items                           *node
	minItems, maxItems              *int
	uniqueItems                     bool
	contains                        *node
	minContains, maxContains        *int
	props                           map[string]*node
	propNames                       []string // sorted keys of props
	patternProps                    []patternProp
	additional                      *node
	noAdditional                    bool // additionalProperties: false
	propertyNames                   *node
	minProps, maxProps              *int
	required                        []string
	dependentRequired               map[string][]string
	dependentSchemas                map[string]*node
	allOf, anyOf, oneOf             []*node
	not, ifNode, thenNode, elseNode *node

	defaults  map[string]json.RawMessage // properties' defaults, by name
	required1 map[string]bool
}

type patternProp struct {
	re *pattern
	n  *node
}

type compiler struct {
	root    *jsonschema.Schema
	draft7  bool
	nodes   map[*jsonschema.Schema]*node
	anchors map[string]*jsonschema.Schema
}

// Compile compiles s, which must not change afterwards. It supports the
// assertions type, enum, const, multipleOf, minimum, maximum,
// exclusiveMinimum, exclusiveMaximum, minLength, maxLength, pattern,
// prefixItems, items (a schema), minItems, maxItems, uniqueItems, contains,
// minContains, maxContains, properties, patternProperties,
// additionalProperties, propertyNames, minProperties, maxProperties,
// required, dependentRequired, dependentSchemas, allOf, anyOf, oneOf, not,
// if/then/else, and $ref to "#", a JSON pointer into the schema or a
// $anchor; in a draft-07 schema also the array form of items,
// additionalItems and dependencies, which draft 2020-12 replaced by
// prefixItems, items and dependentRequired/dependentSchemas. Defaults of
// properties are checked against their schema here and applied by
// ApplyDefaults. Annotations (title, description, default, examples,
// format, deprecated, readOnly, writeOnly, $comment, content*, and keywords
// JSON Schema does not define, such as x-mcp-header) assert nothing, as the
// specification says. Anything else — $dynamicRef, $dynamicAnchor,
// $vocabulary, unevaluated*, a nested $id, a $ref that leaves the document,
// and the draft-07 keywords above in a draft 2020-12 schema (where
// jsonschema-go ignores them, and an author who wrote them meant them to
// assert) — is an error wrapping ErrUnsupported.
func Compile(s *jsonschema.Schema) (*Validator, error) {
	if s == nil {
		return nil, errors.New("argcheck: no schema")
	}
	c := &compiler{root: s, nodes: map[*jsonschema.Schema]*node{}, anchors: map[string]*jsonschema.Schema{}}
	switch s.Schema {
	case "", "https://json-schema.org/draft/2020-12/schema":
	case "http://json-schema.org/draft-07/schema#", "https://json-schema.org/draft-07/schema#":
		c.draft7 = true
	default:
		return nil, fmt.Errorf("argcheck: $schema %q: only draft 2020-12 and draft-07 are supported", s.Schema)
	}
	if err := c.collectAnchors(s, "", 0); err != nil {
		return nil, err
	}
	root, err := c.compile(s, "")
	if err != nil {
		return nil, err
	}
	v := &Validator{root: root}
	if err := c.checkDefaults(); err != nil {
		return nil, err
	}
	return v, nil
}

// maxSchemaDepth bounds the nesting of a schema Compile walks.
const maxSchemaDepth = 64

func (c *compiler) collectAnchors(s *jsonschema.Schema, at string, depth int) error {
	if depth > maxSchemaDepth {
		return fmt.Errorf("argcheck: %s: schema nested deeper than %d levels", where(at), maxSchemaDepth)
	}
	if s.Anchor != "" {
		if _, dup := c.anchors[s.Anchor]; dup {
			return fmt.Errorf("argcheck: %s: $anchor %q defined twice", where(at), s.Anchor)
		}
		c.anchors[s.Anchor] = s
	}
	var err error
	eachChild(s, func(name string, sub *jsonschema.Schema) bool {
		if sub == nil {
			err = fmt.Errorf("argcheck: %s: null schema", where(at+"/"+name))
		} else {
			err = c.collectAnchors(sub, at+"/"+name, depth+1)
		}
		return err == nil
	})
	return err
}

// eachChild calls fn with every subschema of s and its pointer suffix
// ("properties/zone", "items"), until fn returns false.
func eachChild(s *jsonschema.Schema, fn func(key string, sub *jsonschema.Schema) bool) bool {
	for _, m := range []struct {
		kw string
		m  map[string]*jsonschema.Schema
	}{{"$defs", s.Defs}, {"definitions", s.Definitions}, {"properties", s.Properties},
		{"patternProperties", s.PatternProperties}, {"dependentSchemas", s.DependentSchemas},
		{"dependencies", s.DependencySchemas}} {
		for k, sub := range m.m {
			if !fn(m.kw+"/"+k, sub) {
				return false
			}
		}
	}
	for _, l := range []struct {
		kw   string
		list []*jsonschema.Schema
	}{{"prefixItems", s.PrefixItems}, {"allOf", s.AllOf}, {"anyOf", s.AnyOf}, {"oneOf", s.OneOf},
		{"items", s.ItemsArray}} {
		for i, sub := range l.list {
			if !fn(l.kw+"/"+strconv.Itoa(i), sub) {
				return false
			}
		}
	}
	for _, one := range []struct {
		kw  string
		sub *jsonschema.Schema
	}{{"items", s.Items}, {"additionalProperties", s.AdditionalProperties}, {"propertyNames", s.PropertyNames},
		{"contains", s.Contains}, {"not", s.Not}, {"if", s.If}, {"then", s.Then}, {"else", s.Else},
		{"additionalItems", s.AdditionalItems}} {
		if one.sub != nil && !fn(one.kw, one.sub) {
			return false
		}
	}
	return true
}

// child is the subschema of s at a pointer suffix, or nil.
func child(s *jsonschema.Schema, key string) *jsonschema.Schema {
	var found *jsonschema.Schema
	eachChild(s, func(k string, sub *jsonschema.Schema) bool {
		if k == key {
			found = sub
			return false
		}
		return true
	})
	return found
}

func where(at string) string {
	if at == "" {
		return "schema root"
	}
	return "schema " + at
}

func unsupported(at, kw string) error {
	return fmt.Errorf("%w %s at %s", ErrUnsupported, kw, where(at))
}

// refuse reports the first keyword of s the validator does not implement.
func (c *compiler) refuse(s *jsonschema.Schema, at string) error {
	switch {
	case s.DynamicRef != "":
		return unsupported(at, "$dynamicRef")
	case s.DynamicAnchor != "":
		return unsupported(at, "$dynamicAnchor")
	case s.Vocabulary != nil:
		return unsupported(at, "$vocabulary")
	case s.UnevaluatedItems != nil:
		return unsupported(at, "unevaluatedItems")
	case s.UnevaluatedProperties != nil:
		return unsupported(at, "unevaluatedProperties")
	case !c.draft7 && s.ItemsArray != nil:
		return unsupported(at, "items (array form, a draft-07 keyword)")
	case !c.draft7 && s.AdditionalItems != nil:
		return unsupported(at, "additionalItems (a draft-07 keyword)")
	case !c.draft7 && (s.DependencySchemas != nil || s.DependencyStrings != nil):
		return unsupported(at, "dependencies (a draft-07 keyword)")
	case s.ID != "" && s != c.root:
		return unsupported(at, "$id below the root")
	case c.draft7 && (s.PrefixItems != nil || s.DependentRequired != nil || s.DependentSchemas != nil):
		return unsupported(at, "a draft 2020-12 keyword in a draft-07 schema")
	}
	return nil
}

func (c *compiler) compile(s *jsonschema.Schema, at string) (*node, error) {
	if n, ok := c.nodes[s]; ok {
		return n, nil
	}
	if err := c.refuse(s, at); err != nil {
		return nil, err
	}
	n := &node{}
	c.nodes[s] = n // before the children: $ref may cycle back here
	if s.Ref != "" {
		target, err := c.lookup(s.Ref, at)
		if err != nil {
			return nil, err
		}
		if n.ref, err = c.compile(target, "$ref "+s.Ref); err != nil {
			return nil, err
		}
		if c.draft7 {
			n.refOnly = true
			return n, nil
		}
	}
	if err := c.scalars(n, s, at); err != nil {
		return nil, err
	}
	if err := c.subschemas(n, s, at); err != nil {
		return nil, err
	}
	return n, nil
}

var jsonTypes = []string{"null", "boolean", "object", "array", "number", "string", "integer"}

// scalars compiles the keywords that hold values, not schemas.
func (c *compiler) scalars(n *node, s *jsonschema.Schema, at string) error {
	switch {
	case s.Type != "":
		n.types = []string{s.Type}
	case s.Types != nil:
		n.types = slices.Clone(s.Types)
		if len(n.types) == 0 {
			return fmt.Errorf("argcheck: %s: type is an empty list", where(at))
		}
	}
	for _, t := range n.types {
		if !slices.Contains(jsonTypes, t) {
			return fmt.Errorf("argcheck: %s: unknown type %q", where(at), t)
		}
	}
	if s.Enum != nil {
		for _, e := range s.Enum {
			v, err := normalize(e)
			if err != nil {
				return fmt.Errorf("argcheck: %s: enum: %w", where(at), err)
			}
			n.enum = append(n.enum, v)
		}
		if n.enum == nil {
			n.enum = []any{}
		}
	}
	if s.Const != nil {
		v, err := normalize(*s.Const)
		if err != nil {
			return fmt.Errorf("argcheck: %s: const: %w", where(at), err)
		}
		n.cnst = &v
	}
	if s.MultipleOf != nil && *s.MultipleOf <= 0 {
		return fmt.Errorf("argcheck: %s: multipleOf must be positive", where(at))
	}
	n.multipleOf, n.minimum, n.maximum, n.exMinimum, n.exMaximum = s.MultipleOf, s.Minimum, s.Maximum, s.ExclusiveMinimum, s.ExclusiveMaximum
	for i, p := range []*int{s.MinLength, s.MaxLength, s.MinItems, s.MaxItems, s.MinContains, s.MaxContains, s.MinProperties, s.MaxProperties} {
		if p != nil && *p < 0 {
			kw := [...]string{"minLength", "maxLength", "minItems", "maxItems", "minContains", "maxContains", "minProperties", "maxProperties"}[i]
			return fmt.Errorf("argcheck: %s: %s must not be negative", where(at), kw)
		}
	}
	n.minLength, n.maxLength = s.MinLength, s.MaxLength
	if s.Pattern != "" {
		re, err := newPattern(s.Pattern)
		if err != nil {
			return fmt.Errorf("argcheck: %s: pattern: %w", where(at), err)
		}
		n.pattern = re
	}
	n.minItems, n.maxItems, n.uniqueItems = s.MinItems, s.MaxItems, s.UniqueItems
	n.minContains, n.maxContains = s.MinContains, s.MaxContains
	n.minProps, n.maxProps = s.MinProperties, s.MaxProperties
	n.required = slices.Clone(s.Required)
	if len(s.Required) > 0 {
		n.required1 = map[string]bool{}
		for _, r := range s.Required {
			n.required1[r] = true
		}
	}
	n.dependentRequired = s.DependentRequired
	if c.draft7 { // the array half of draft-07's dependencies
		n.dependentRequired = s.DependencyStrings
	}
	return nil
}

// subschemas compiles the keywords that hold schemas.
func (c *compiler) subschemas(n *node, s *jsonschema.Schema, at string) error {
	var err error
	one := func(sub *jsonschema.Schema, kw string) *node {
		if sub == nil || err != nil {
			return nil
		}
		var out *node
		out, err = c.compile(sub, at+"/"+kw)
		return out
	}
	list := func(subs []*jsonschema.Schema, kw string) []*node {
		var out []*node
		for i, sub := range subs {
			out = append(out, one(sub, kw+"/"+strconv.Itoa(i)))
		}
		return out
	}
	n.items, n.contains, n.additional = one(s.Items, "items"), one(s.Contains, "contains"), one(s.AdditionalProperties, "additionalProperties")
	n.propertyNames, n.not = one(s.PropertyNames, "propertyNames"), one(s.Not, "not")
	n.ifNode, n.thenNode, n.elseNode = one(s.If, "if"), one(s.Then, "then"), one(s.Else, "else")
	n.prefixItems, n.allOf, n.anyOf, n.oneOf = list(s.PrefixItems, "prefixItems"), list(s.AllOf, "allOf"), list(s.AnyOf, "anyOf"), list(s.OneOf, "oneOf")
	if s.AdditionalProperties != nil && isFalse(s.AdditionalProperties) {
		n.noAdditional = true
	}
	if len(s.Properties) > 0 {
		n.props = map[string]*node{}
		n.propNames = slices.Sorted(maps.Keys(s.Properties))
		for _, name := range n.propNames {
			sub := s.Properties[name]
			n.props[name] = one(sub, "properties/"+name)
			if sub != nil && sub.Default != nil {
				if n.defaults == nil {
					n.defaults = map[string]json.RawMessage{}
				}
				n.defaults[name] = sub.Default
			}
		}
	}
	for _, p := range slices.Sorted(maps.Keys(s.PatternProperties)) {
		re, rerr := newPattern(p)
		if rerr != nil {
			return fmt.Errorf("argcheck: %s: patternProperties %q: %w", where(at), p, rerr)
		}
		n.patternProps = append(n.patternProps, patternProp{re, one(s.PatternProperties[p], "patternProperties/"+p)})
	}
	deps, depsKw := s.DependentSchemas, "dependentSchemas"
	if c.draft7 { // the schema half of draft-07's dependencies (the other is in scalars)
		deps, depsKw = s.DependencySchemas, "dependencies"
	}
	if c.draft7 && s.ItemsArray != nil {
		// draft-07's array form of items is prefixItems, and additionalItems
		// the items after them; beside items as one schema, or none,
		// additionalItems is ignored, as jsonschema-go ignores it.
		n.prefixItems, n.items = list(s.ItemsArray, "items"), one(s.AdditionalItems, "additionalItems")
	}
	if len(deps) > 0 {
		n.dependentSchemas = map[string]*node{}
		for name, sub := range deps {
			n.dependentSchemas[name] = one(sub, depsKw+"/"+name)
		}
	}
	return err
}

// isFalse reports the schema `false`, which jsonschema-go reads as
// {"not": {}}; like its validator, only the "not" member is looked at.
func isFalse(s *jsonschema.Schema) bool {
	return s.Not != nil && reflect.ValueOf(*s.Not).IsZero()
}

// lookup resolves a $ref inside the document.
func (c *compiler) lookup(ref, at string) (*jsonschema.Schema, error) {
	frag, ok := strings.CutPrefix(ref, "#")
	if !ok {
		return nil, unsupported(at, fmt.Sprintf("$ref %q (outside this schema)", ref))
	}
	if frag == "" {
		return c.root, nil
	}
	if !strings.HasPrefix(frag, "/") {
		if s, ok := c.anchors[frag]; ok {
			return s, nil
		}
		return nil, fmt.Errorf("argcheck: %s: $ref %q: no such $anchor", where(at), ref)
	}
	frag, err := url.PathUnescape(frag)
	if err != nil {
		return nil, fmt.Errorf("argcheck: %s: $ref %q: %w", where(at), ref, err)
	}
	s := c.root
	toks := strings.Split(frag[1:], "/")
	for i := 0; i < len(toks) && s != nil; i++ {
		tok := strings.NewReplacer("~1", "/", "~0", "~").Replace(toks[i])
		key := tok
		if i+1 < len(toks) {
			key = tok + "/" + strings.NewReplacer("~1", "/", "~0", "~").Replace(toks[i+1])
		}
		if sub := child(s, key); sub != nil && i+1 < len(toks) {
			s, i = sub, i+1
			continue
		}
		s = child(s, tok)
	}
	if s == nil {
		return nil, fmt.Errorf("argcheck: %s: $ref %q: no such subschema", where(at), ref)
	}
	return s, nil
}

// checkDefaults validates every property default against its schema, as
// jsonschema-go's Resolve does with ValidateDefaults.
func (c *compiler) checkDefaults() error {
	for s, n := range c.nodes {
		if s.Default == nil {
			continue
		}
		var d any
		if err := json.Unmarshal(s.Default, &d); err != nil {
			return fmt.Errorf("argcheck: a default is not JSON: %w", err)
		}
		if f := (&Validator{root: n}).Validate(d); f != nil {
			return fmt.Errorf("argcheck: default %s: %s", s.Default, f.Message())
		}
	}
	return nil
}

// normalize turns a Go value from a schema (an enum member, a const) into
// the form json.Unmarshal gives: float64, string, bool, nil, []any,
// map[string]any.
func normalize(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	return out, json.Unmarshal(b, &out)
}
