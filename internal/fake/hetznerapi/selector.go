package hetznerapi

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// ErrSelector is wrapped by every label-selector parse error.
var ErrSelector = errors.New("invalid label selector")

// Selector is a parsed label_selector: every requirement must hold (comma =
// AND, reference §2.4).
type Selector []Requirement

// Requirement is one term of a Selector.
type Requirement struct {
	Key    string
	Op     string // "=", "!=", "exists", "!", "in", "notin"
	Values []string
}

var setExprRe = regexp.MustCompile(`^(\S+)\s+(in|notin)\s*\((.*)\)$`)

// ParseSelector parses the documented grammar: k=v, k==v, k!=v, k, !k,
// k in (v1,v2), k notin (v1,v2), joined by commas. The empty string selects
// everything.
func ParseSelector(s string) (Selector, error) {
	if strings.TrimSpace(s) == "" {
		return Selector{}, nil
	}
	terms, err := splitTerms(s)
	if err != nil {
		return nil, err
	}
	sel := make(Selector, 0, len(terms))
	for _, t := range terms {
		req, err := parseTerm(strings.TrimSpace(t))
		if err != nil {
			return nil, err
		}
		sel = append(sel, req)
	}
	return sel, nil
}

// splitTerms splits at commas outside parentheses.
func splitTerms(s string) ([]string, error) {
	var terms []string
	depth, start := 0, 0
	for i, c := range s {
		switch c {
		case '(':
			depth++
			if depth > 1 {
				return nil, fmt.Errorf("%w: nested parentheses", ErrSelector)
			}
		case ')':
			depth--
			if depth < 0 {
				return nil, fmt.Errorf("%w: unbalanced parentheses", ErrSelector)
			}
		case ',':
			if depth == 0 {
				terms = append(terms, s[start:i])
				start = i + 1
			}
		}
	}
	if depth != 0 {
		return nil, fmt.Errorf("%w: unbalanced parentheses", ErrSelector)
	}
	return append(terms, s[start:]), nil
}

func parseTerm(t string) (Requirement, error) {
	if t == "" {
		return Requirement{}, fmt.Errorf("%w: empty term", ErrSelector)
	}
	if m := setExprRe.FindStringSubmatch(t); m != nil {
		return setTerm(m[1], m[2], m[3])
	}
	if k, ok := strings.CutPrefix(t, "!"); ok && !strings.ContainsAny(k, "=!") {
		return keyTerm(strings.TrimSpace(k), "!")
	}
	for _, op := range []string{"!=", "==", "="} {
		if k, v, ok := strings.Cut(t, op); ok {
			return valueTerm(strings.TrimSpace(k), op, strings.TrimSpace(v))
		}
	}
	return keyTerm(t, "exists")
}

func keyTerm(k, op string) (Requirement, error) {
	if err := checkSelectorKey(k); err != nil {
		return Requirement{}, err
	}
	return Requirement{Key: k, Op: op}, nil
}

func valueTerm(k, op, v string) (Requirement, error) {
	if err := checkSelectorKey(k); err != nil {
		return Requirement{}, err
	}
	if err := checkLabelValue(v); err != nil {
		return Requirement{}, fmt.Errorf("%w: %v", ErrSelector, err)
	}
	if op == "==" {
		op = "="
	}
	return Requirement{Key: k, Op: op, Values: []string{v}}, nil
}

func setTerm(k, op, list string) (Requirement, error) {
	if err := checkSelectorKey(k); err != nil {
		return Requirement{}, err
	}
	if strings.TrimSpace(list) == "" {
		return Requirement{}, fmt.Errorf("%w: empty value set", ErrSelector)
	}
	var vals []string
	for _, v := range strings.Split(list, ",") {
		v = strings.TrimSpace(v)
		if err := checkLabelValue(v); err != nil {
			return Requirement{}, fmt.Errorf("%w: %v", ErrSelector, err)
		}
		vals = append(vals, v)
	}
	return Requirement{Key: k, Op: op, Values: vals}, nil
}

// checkSelectorKey accepts any syntactically valid key, reserved prefixes
// included (they may be selected, just not written).
func checkSelectorKey(k string) error {
	if err := checkLabelKey(k); err != nil && !strings.HasPrefix(k, reservedLabel) {
		return fmt.Errorf("%w: %v", ErrSelector, err)
	}
	if strings.HasPrefix(k, reservedLabel) && !labelNameRe.MatchString(k[len(reservedLabel):]) {
		return fmt.Errorf("%w: invalid label key %q", ErrSelector, k)
	}
	return nil
}

// Matches reports whether labels satisfy every requirement. Like Kubernetes,
// "!=" and "notin" also match when the key is absent.
func (sel Selector) Matches(labels map[string]string) bool {
	for _, r := range sel {
		if !r.matches(labels) {
			return false
		}
	}
	return true
}

func (r Requirement) matches(labels map[string]string) bool {
	v, ok := labels[r.Key]
	switch r.Op {
	case "exists":
		return ok
	case "!":
		return !ok
	case "=", "in":
		return ok && slices.Contains(r.Values, v)
	case "!=", "notin":
		return !ok || !slices.Contains(r.Values, v)
	}
	return false
}
