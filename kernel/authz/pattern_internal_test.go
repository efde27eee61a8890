package authz

import (
	"testing"

	"github.com/cedar-policy/cedar-go/types"
)

// testPattern builds a pattern from text where '*' is a wildcard and
// every other byte is literal.
func testPattern(text string) types.Pattern {
	var comps []any
	lit := ""
	for i := 0; i < len(text); i++ {
		if text[i] == '*' {
			if lit != "" {
				comps = append(comps, lit)
				lit = ""
			}
			comps = append(comps, types.Wildcard{})
			continue
		}
		lit += text[i : i+1]
	}
	if lit != "" {
		comps = append(comps, lit)
	}
	return types.NewPattern(comps...)
}

var patternCases = []string{"", "*", "**", "a", "abc", "*abc", "abc*", "*abc*", "a*c", "ab*bc", "*a*", "a*b*c", "*a*b", "a**b", "***",
	".example.com", "*.example.com", "*.team-a.example", "x.*.example", "ü*", "*ü", "a*a", "aa*aa"}

var patternInputs = []string{"", "a", "b", "ab", "abc", "abcabc", "aabc", "abcc", "ac", "abbc", "bc", "example.com", ".example.com",
	"www.example.com", "x.team-a.example", "team-a.example", "x.y.example", "ü", "üü", "aa", "aaa", "aaaa", "a\x00c", "\xff"}

// TestPatternMatcherMatchesCedar: the matcher like uses gives
// Pattern.Match's answer for every shape, the fast ones included.
func TestPatternMatcherMatchesCedar(t *testing.T) {
	for _, pt := range patternCases {
		pat := testPattern(pt)
		match := patternMatcher(pat)
		for _, s := range append(patternInputs, patternCases...) {
			if got, want := match(s), pat.Match(types.String(s)); got != want {
				t.Errorf("pattern %q on %q: %v, cedar-go %v", pt, s, got, want)
			}
		}
	}
	// the fast shapes are taken (not only the fallback)
	for _, pt := range []string{"", "*", "a", "*a", "a*", "*a*", "a*b"} {
		if _, ok := patternComponents(testPattern(pt)); !ok {
			t.Errorf("pattern %q: components not read", pt)
		}
	}
}

// FuzzPatternMatcher holds patternMatcher to Pattern.Match.
func FuzzPatternMatcher(f *testing.F) {
	for _, pt := range patternCases {
		for _, s := range patternInputs[:6] {
			f.Add(pt, s)
		}
	}
	f.Fuzz(func(t *testing.T, pt, s string) {
		pat := testPattern(pt)
		if got, want := patternMatcher(pat)(s), pat.Match(types.String(s)); got != want {
			t.Fatalf("pattern %q on %q: %v, cedar-go %v", pt, s, got, want)
		}
	})
}
