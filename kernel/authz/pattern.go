package authz

import (
	"encoding/json"
	"strings"

	"github.com/cedar-policy/cedar-go/types"
)

// patternMatcher returns a function that matches a string as
// pat.Match does. The common shapes — a literal, a prefix, a suffix, a
// substring, a prefix and a suffix — are matched with the strings
// package; any other pattern by pat.Match itself. cedar-go's matcher
// compares bytes and, for a pattern of literals each after a wildcard,
// finds each literal at its first place and the last one at the end,
// which is what these shapes test (TestPatternMatcherMatchesCedar,
// FuzzPatternMatcher).
func patternMatcher(pat types.Pattern) func(string) bool {
	fallback := func(s string) bool { return pat.Match(types.String(s)) }
	comps, ok := patternComponents(pat)
	if !ok {
		return fallback
	}
	// shape: W for a wildcard, L for a literal
	var shape strings.Builder
	var lits []string
	for _, c := range comps {
		if c == nil {
			shape.WriteByte('W')
			continue
		}
		shape.WriteByte('L')
		lits = append(lits, *c)
	}
	switch shape.String() {
	case "":
		return func(s string) bool { return s == "" }
	case "W":
		return func(string) bool { return true }
	case "L":
		lit := lits[0]
		return func(s string) bool { return s == lit }
	case "WL":
		lit := lits[0]
		return func(s string) bool { return strings.HasSuffix(s, lit) }
	case "LW":
		lit := lits[0]
		return func(s string) bool { return strings.HasPrefix(s, lit) }
	case "WLW":
		lit := lits[0]
		return func(s string) bool { return strings.Contains(s, lit) }
	case "LWL":
		pre, suf := lits[0], lits[1]
		return func(s string) bool {
			return len(s) >= len(pre)+len(suf) && strings.HasPrefix(s, pre) && strings.HasSuffix(s, suf)
		}
	}
	return fallback
}

// patternComponents reads a pattern's components through its JSON form
// (nil for a wildcard, else the literal), and checks that they build the
// same pattern again; false when they do not.
func patternComponents(pat types.Pattern) ([]*string, bool) {
	raw, err := pat.MarshalJSON()
	if err != nil {
		return nil, false
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, false
	}
	var comps []*string
	var args []any
	for _, it := range items {
		var w string
		if json.Unmarshal(it, &w) == nil {
			if w != "Wildcard" {
				return nil, false
			}
			comps = append(comps, nil)
			args = append(args, types.Wildcard{})
			continue
		}
		var lit struct{ Literal *string }
		if err := json.Unmarshal(it, &lit); err != nil || lit.Literal == nil || *lit.Literal == "" {
			return nil, false
		}
		comps = append(comps, lit.Literal)
		args = append(args, *lit.Literal)
	}
	if !types.NewPattern(args...).Equal(pat) {
		return nil, false
	}
	return comps, true
}
