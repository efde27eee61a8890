package localzone

import (
	"fmt"
	"slices"
	"strings"
)

// selector is a parsed label selector (reference §2.4): requirements joined
// by commas, all of which must hold.
type selector []requirement

// Selector operators.
const (
	opExists = iota
	opNotExists
	opEquals
	opNotEquals
	opIn
	opNotIn
)

type requirement struct {
	key    string
	op     int
	values []string
}

// maxSelector bounds a selector's length.
const maxSelector = 4096

// parseSelector parses "k=v", "k==v", "k!=v", "k", "!k", "k in (a,b)" and
// "k notin (a,b)", joined by commas. Blanks around tokens are ignored. The
// empty selector selects everything.
func parseSelector(s string) (selector, error) {
	if len(s) > maxSelector {
		return nil, fmt.Errorf("selector longer than %d bytes", maxSelector)
	}
	p := &selParser{s: s}
	var sel selector
	if p.skip(); p.eof() {
		return nil, nil
	}
	for {
		r, err := p.requirement()
		if err != nil {
			return nil, err
		}
		sel = append(sel, r)
		if p.skip(); p.eof() {
			return sel, nil
		}
		if !p.take(",") {
			return nil, p.errf("expected a comma")
		}
	}
}

// matches reports whether labels satisfy every requirement.
func (sel selector) matches(labels map[string]string) bool {
	for _, r := range sel {
		v, ok := labels[r.key]
		var hold bool
		switch r.op {
		case opExists:
			hold = ok
		case opNotExists:
			hold = !ok
		case opEquals:
			hold = ok && v == r.values[0]
		case opNotEquals:
			hold = !ok || v != r.values[0]
		case opIn:
			hold = ok && slices.Contains(r.values, v)
		case opNotIn:
			hold = !ok || !slices.Contains(r.values, v)
		}
		if !hold {
			return false
		}
	}
	return true
}

type selParser struct {
	s   string
	pos int
}

func (p *selParser) eof() bool { return p.pos >= len(p.s) }

func (p *selParser) skip() {
	for !p.eof() && (p.s[p.pos] == ' ' || p.s[p.pos] == '\t') {
		p.pos++
	}
}

// take consumes tok when it comes next (after blanks).
func (p *selParser) take(tok string) bool {
	save := p.pos
	p.skip()
	if strings.HasPrefix(p.s[p.pos:], tok) {
		p.pos += len(tok)
		return true
	}
	p.pos = save
	return false
}

func (p *selParser) errf(format string, args ...any) error {
	return fmt.Errorf("label selector at offset %d: %s", p.pos, fmt.Sprintf(format, args...))
}

func (p *selParser) requirement() (requirement, error) {
	if p.take("!") {
		k, err := p.word(true)
		return requirement{key: k, op: opNotExists}, err
	}
	k, err := p.word(true)
	if err != nil {
		return requirement{}, err
	}
	switch {
	case p.take("=="), p.take("="):
		v, err := p.word(false)
		return requirement{key: k, op: opEquals, values: []string{v}}, err
	case p.take("!="):
		v, err := p.word(false)
		return requirement{key: k, op: opNotEquals, values: []string{v}}, err
	case p.keyword("notin"):
		vs, err := p.set()
		return requirement{key: k, op: opNotIn, values: vs}, err
	case p.keyword("in"):
		vs, err := p.set()
		return requirement{key: k, op: opIn, values: vs}, err
	}
	return requirement{key: k, op: opExists}, nil
}

// keyword consumes a word operator that must be followed by a blank or "(".
func (p *selParser) keyword(w string) bool {
	save := p.pos
	p.skip()
	if p.pos == save || !strings.HasPrefix(p.s[p.pos:], w) {
		p.pos = save
		return false
	}
	if rest := p.s[p.pos+len(w):]; rest == "" || (rest[0] != ' ' && rest[0] != '\t' && rest[0] != '(') {
		p.pos = save
		return false
	}
	p.pos += len(w)
	return true
}

// set parses "(v1, v2, ...)"; it may not be empty.
func (p *selParser) set() ([]string, error) {
	if !p.take("(") {
		return nil, p.errf("expected '('")
	}
	var vs []string
	for {
		v, err := p.word(false)
		if err != nil {
			return nil, err
		}
		vs = append(vs, v)
		if p.take(")") {
			return vs, nil
		}
		if !p.take(",") {
			return nil, p.errf("expected ',' or ')'")
		}
	}
}

// word reads a key (letters, digits, "-_./") or a value (the same without
// "/"; possibly empty).
func (p *selParser) word(key bool) (string, error) {
	p.skip()
	start := p.pos
	for !p.eof() {
		c := p.s[p.pos]
		if !alnum(c) && c != '-' && c != '_' && c != '.' && (!key || c != '/') {
			break
		}
		p.pos++
	}
	w := p.s[start:p.pos]
	if key && w == "" {
		return "", p.errf("expected a label key")
	}
	if key && (w == "in" || w == "notin") {
		return "", p.errf("%q is not a label key", w)
	}
	return w, nil
}
