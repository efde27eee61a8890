package argcheck

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/bulwarkmcp/bulwark/kernel/untrusted"
)

// Step is one step of a path into the arguments: a property name, or an
// array index when Index >= 0.
type Step struct {
	Name  string
	Index int
}

// Failure is why a value does not fit: where, which rule, and a detail
// sentence that quotes at most a short prefix of the offending value.
type Failure struct {
	Path   []Step // from the arguments' root to the offending value
	Rule   string // the schema keyword that refused it, e.g. "maxLength"
	Detail string // e.g. `"abc" contains 3 Unicode code points, more than 2`
}

// Message is the rule and the detail: `maxLength: "abc" contains ...`.
// A refused additional property reads `unexpected additional properties
// ["x"]`, as it always has.
func (f *Failure) Message() string {
	if f.Rule == "additionalProperties" && strings.HasPrefix(f.Detail, "unexpected") {
		return f.Detail
	}
	return f.Rule + ": " + f.Detail
}

// MaxDepth is how deep validation descends (into the value, and through
// $ref) before it refuses the value: a budget, so that no schema or input
// makes it recurse without bound. The kernel's JSON scanner refuses
// arguments nested deeper than 1000 levels before they are decoded.
const MaxDepth = 1024

type state struct {
	path   []Step
	depth  int
	visits int // subschema applications, for the budget test
}

// Validate checks v, a value as json.Unmarshal decodes it into an any
// (map[string]any, []any, string, float64, bool, nil), and returns the
// first failure found, or nil. Properties are checked in sorted order, so
// the failure reported for a given value is always the same one.
func (v *Validator) Validate(val any) *Failure {
	st := &state{}
	return st.check(v.root, val)
}

// sortedKeys is m's keys in order; nil, without allocating, for an empty m
// (most schemas have no dependentRequired or dependentSchemas).
func sortedKeys[V any](m map[string]V) []string {
	if len(m) == 0 {
		return nil
	}
	return slices.Sorted(maps.Keys(m))
}

func (st *state) fail(rule, format string, args ...any) *Failure {
	return &Failure{Path: slices.Clone(st.path), Rule: rule, Detail: fmt.Sprintf(format, args...)}
}

func (st *state) check(n *node, v any) *Failure {
	st.visits++
	st.depth++
	defer func() { st.depth-- }()
	if st.depth > MaxDepth {
		return st.fail("depth", "nested deeper than %d levels", MaxDepth)
	}
	if n.ref != nil {
		if f := st.check(n.ref, v); f != nil || n.refOnly {
			return f
		}
	}
	if f := st.value(n, v); f != nil {
		return f
	}
	if f := st.logic(n, v); f != nil {
		return f
	}
	switch x := v.(type) {
	case []any:
		return st.array(n, x)
	case map[string]any:
		return st.object(n, x)
	}
	return nil
}

// value checks type, enum, const and the number and string keywords.
func (st *state) value(n *node, v any) *Failure {
	if n.types != nil {
		got := typeOf(v)
		if got == "" {
			return st.fail("type", "%T is not a JSON value", v)
		}
		if !slices.Contains(n.types, got) && !(got == "integer" && slices.Contains(n.types, "number")) {
			if len(n.types) == 1 {
				return st.fail("type", "%s has type %q, want %q", show(v), got, n.types[0])
			}
			return st.fail("type", "%s has type %q, want one of %q", show(v), got, strings.Join(n.types, ", "))
		}
	}
	if n.enum != nil && !slices.ContainsFunc(n.enum, func(e any) bool { return equal(e, v) }) {
		return st.fail("enum", "%s does not equal any of: %s", show(v), show(n.enum))
	}
	if n.cnst != nil && !equal(*n.cnst, v) {
		return st.fail("const", "%s does not equal %s", show(v), show(*n.cnst))
	}
	switch x := v.(type) {
	case float64:
		return st.number(n, x)
	case string:
		return st.str(n, x)
	}
	return nil
}

func (st *state) number(n *node, x float64) *Failure {
	if n.multipleOf != nil {
		if _, f := math.Modf(x / *n.multipleOf); f != 0 {
			return st.fail("multipleOf", "%s is not a multiple of %s", num(x), num(*n.multipleOf))
		}
	}
	switch {
	case n.minimum != nil && x < *n.minimum:
		return st.fail("minimum", "%s is less than %s", num(x), num(*n.minimum))
	case n.maximum != nil && x > *n.maximum:
		return st.fail("maximum", "%s is greater than %s", num(x), num(*n.maximum))
	case n.exMinimum != nil && x <= *n.exMinimum:
		return st.fail("exclusiveMinimum", "%s is less than or equal to %s", num(x), num(*n.exMinimum))
	case n.exMaximum != nil && x >= *n.exMaximum:
		return st.fail("exclusiveMaximum", "%s is greater than or equal to %s", num(x), num(*n.exMaximum))
	}
	return nil
}

func (st *state) str(n *node, s string) *Failure {
	if n.minLength != nil || n.maxLength != nil {
		c := utf8.RuneCountInString(s)
		if n.minLength != nil && c < *n.minLength {
			return st.fail("minLength", "%s contains %d Unicode code points, fewer than %d", show(s), c, *n.minLength)
		}
		if n.maxLength != nil && c > *n.maxLength {
			return st.fail("maxLength", "%s contains %d Unicode code points, more than %d", show(s), c, *n.maxLength)
		}
	}
	if n.pattern != nil && !n.pattern.MatchString(s) {
		return st.fail("pattern", "%s does not match regular expression %q", show(s), n.pattern.String())
	}
	return nil
}

// logic applies allOf, anyOf, oneOf, not and if/then/else.
func (st *state) logic(n *node, v any) *Failure {
	for _, sub := range n.allOf {
		if f := st.check(sub, v); f != nil {
			return f
		}
	}
	if n.anyOf != nil && !slices.ContainsFunc(n.anyOf, func(sub *node) bool { return st.check(sub, v) == nil }) {
		return st.fail("anyOf", "matches none of the %d alternatives", len(n.anyOf))
	}
	if n.oneOf != nil {
		first := -1
		for i, sub := range n.oneOf {
			if st.check(sub, v) != nil {
				continue
			}
			if first >= 0 {
				return st.fail("oneOf", "matches alternatives %d and %d, not exactly one", first+1, i+1)
			}
			first = i
		}
		if first < 0 {
			return st.fail("oneOf", "matches none of the %d alternatives", len(n.oneOf))
		}
	}
	if n.not != nil && st.check(n.not, v) == nil {
		return st.fail("not", "matches the schema it must not match")
	}
	if n.ifNode != nil {
		next := n.elseNode
		if st.check(n.ifNode, v) == nil {
			next = n.thenNode
		}
		if next != nil {
			return st.check(next, v)
		}
	}
	return nil
}

func (st *state) array(n *node, a []any) *Failure {
	// The lengths first: a long array is refused before its items cost work.
	if n.minItems != nil && len(a) < *n.minItems {
		return st.fail("minItems", "array length %d is less than %d", len(a), *n.minItems)
	}
	if n.maxItems != nil && len(a) > *n.maxItems {
		return st.fail("maxItems", "array length %d is greater than %d", len(a), *n.maxItems)
	}
	for i, item := range a {
		sub := n.items
		if i < len(n.prefixItems) {
			sub = n.prefixItems[i]
		}
		if sub == nil {
			continue
		}
		st.path = append(st.path, Step{Index: i})
		f := st.check(sub, item)
		st.path = st.path[:len(st.path)-1]
		if f != nil {
			return f
		}
	}
	if n.contains != nil {
		if f := st.containsCount(n, a); f != nil {
			return f
		}
	}
	if n.uniqueItems && len(a) > 1 {
		seen := make(map[string]int, len(a))
		for i, item := range a {
			key := string(canonical(nil, item))
			if j, dup := seen[key]; dup {
				return st.fail("uniqueItems", "array items %d and %d are equal", i, j)
			}
			seen[key] = i
		}
	}
	return nil
}

func (st *state) containsCount(n *node, a []any) *Failure {
	c := 0
	for _, item := range a {
		if st.check(n.contains, item) == nil {
			c++
		}
	}
	minC := 1
	if n.minContains != nil {
		minC = *n.minContains
	}
	switch {
	case c < minC && c == 0:
		return st.fail("contains", "no item matches")
	case c < minC:
		return st.fail("minContains", "%d items match, fewer than %d", c, minC)
	case n.maxContains != nil && c > *n.maxContains:
		return st.fail("maxContains", "%d items match, more than %d", c, *n.maxContains)
	}
	return nil
}

// maxListed is how many names a failure lists.
const maxListed = 8

func (st *state) object(n *node, m map[string]any) *Failure {
	if n.minProps != nil && len(m) < *n.minProps {
		return st.fail("minProperties", "object has %d properties, less than %d", len(m), *n.minProps)
	}
	if n.maxProps != nil && len(m) > *n.maxProps {
		return st.fail("maxProperties", "object has %d properties, greater than %d", len(m), *n.maxProps)
	}
	if missing := absent(m, n.required); len(missing) > 0 {
		return st.fail("required", "missing properties: %s", names(missing))
	}
	if n.noAdditional && !n.onlyDeclared(m) {
		var extra []string
		for k := range m {
			if !n.declared(k) {
				extra = append(extra, k)
			}
		}
		if len(extra) > 0 {
			slices.Sort(extra)
			return st.fail("additionalProperties", "unexpected additional properties %s", names(extra))
		}
	}
	for _, name := range n.propNames {
		if v, ok := m[name]; ok {
			if f := st.at(name, n.props[name], v); f != nil {
				return f
			}
		}
	}
	if f := st.rest(n, m); f != nil {
		return f
	}
	for _, dep := range sortedKeys(n.dependentRequired) {
		if _, ok := m[dep]; ok {
			if missing := absent(m, n.dependentRequired[dep]); len(missing) > 0 {
				return st.fail("dependentRequired", "%q is present, so these are required: %s", dep, names(missing))
			}
		}
	}
	for _, dep := range sortedKeys(n.dependentSchemas) {
		if _, ok := m[dep]; ok {
			if f := st.check(n.dependentSchemas[dep], m); f != nil {
				return f
			}
		}
	}
	return nil
}

// rest applies patternProperties, additionalProperties (as a schema) and
// propertyNames, in key order.
func (st *state) rest(n *node, m map[string]any) *Failure {
	if n.patternProps == nil && (n.additional == nil || n.noAdditional) && n.propertyNames == nil {
		return nil
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		matched := false
		for _, pp := range n.patternProps {
			if pp.re.MatchString(k) {
				matched = true
				if f := st.at(k, pp.n, m[k]); f != nil {
					return f
				}
			}
		}
		if _, declared := n.props[k]; !declared && !matched && n.additional != nil && !n.noAdditional {
			if f := st.at(k, n.additional, m[k]); f != nil {
				return f
			}
		}
		if n.propertyNames != nil {
			if f := st.check(n.propertyNames, k); f != nil {
				f.Rule, f.Detail = "propertyNames", fmt.Sprintf("the name %s: %s", show(k), f.Message())
				return f
			}
		}
	}
	return nil
}

func (st *state) at(name string, sub *node, v any) *Failure {
	st.path = append(st.path, Step{Name: name, Index: -1})
	f := st.check(sub, v)
	st.path = st.path[:len(st.path)-1]
	return f
}

// onlyDeclared reports, without iterating over m (which costs more than a
// few lookups), that every key of m is a declared property: when m holds as
// many of the properties as it has keys. false means "not known": the
// caller then looks at every key.
func (n *node) onlyDeclared(m map[string]any) bool {
	if len(n.patternProps) > 0 || len(n.propNames) > 8 {
		return false
	}
	present := 0
	for _, name := range n.propNames {
		if _, ok := m[name]; ok {
			present++
		}
	}
	return present == len(m)
}

// declared reports whether k is a property or matches a pattern property.
func (n *node) declared(k string) bool {
	if _, ok := n.props[k]; ok {
		return true
	}
	return slices.ContainsFunc(n.patternProps, func(pp patternProp) bool { return pp.re.MatchString(k) })
}

func absent(m map[string]any, want []string) []string {
	var out []string
	for _, k := range want {
		if _, ok := m[k]; !ok {
			out = append(out, k)
		}
	}
	return out
}

// names lists at most maxListed names, quoted: ["a" "b"].
func names(list []string) string {
	if len(list) <= maxListed {
		return fmt.Sprintf("%q", list)
	}
	return fmt.Sprintf("%q and %d more", list[:maxListed], len(list)-maxListed)
}

// typeOf is the JSON Schema type of a decoded value ("" for none): an
// integral number is an "integer".
func typeOf(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case float64:
		if _, f := math.Modf(x); f == 0 {
			return "integer"
		}
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return ""
}

// equal is JSON equality of two decoded values.
func equal(a, b any) bool {
	switch x := a.(type) {
	case []any:
		y, ok := b.([]any)
		return ok && len(x) == len(y) && equalSlices(x, y)
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, xv := range x {
			yv, ok := y[k]
			if !ok || !equal(xv, yv) {
				return false
			}
		}
		return true
	case nil, bool, string, float64:
		return a == b
	}
	return false
}

func equalSlices(x, y []any) bool {
	for i := range x {
		if !equal(x[i], y[i]) {
			return false
		}
	}
	return true
}

// canonical appends a key that two decoded values share exactly when they
// are equal: JSON with object keys sorted, and -0 written as 0.
func canonical(b []byte, v any) []byte {
	switch x := v.(type) {
	case float64:
		return strconv.AppendFloat(append(b, 'n'), x+0, 'g', -1, 64) // x+0: -0 becomes 0
	case []any:
		b = append(b, '[')
		for _, e := range x {
			b = append(canonical(b, e), ',')
		}
		return append(b, ']')
	case map[string]any:
		b = append(b, '{')
		for _, k := range slices.Sorted(maps.Keys(x)) {
			b = append(canonical(strconv.AppendQuote(b, k), x[k]), ',')
		}
		return append(b, '}')
	case string:
		return strconv.AppendQuote(append(b, 's'), x)
	}
	return fmt.Appendf(b, "%v", v) // nil, true, false
}

// maxShown bounds how much of a value a detail quotes.
const maxShown = 64

// show renders a value for a detail: a string quoted, anything else as
// compact JSON; at most maxShown bytes of it, then "…".
func show(v any) string {
	if s, ok := v.(string); ok {
		if len(s) <= maxShown {
			return strconv.Quote(s)
		}
		return strconv.Quote(s[:untrusted.CutIndex(s, maxShown)]) + "…"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%T", v)
	}
	if len(b) > maxShown {
		return string(b[:untrusted.CutIndex(b, maxShown)]) + "…"
	}
	return string(b)
}

// num renders a number as JSON does.
func num(f float64) string {
	b, _ := json.Marshal(f)
	return string(b)
}
