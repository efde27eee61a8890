package argcheck

import (
	"regexp"
	"regexp/syntax"
	"sync"
	"sync/atomic"
)

// pattern is a regular expression checked when its schema is compiled and
// compiled to a matcher on its first use: most of a server's tools are
// never called in a short-lived process (a stdio client that lists tools
// and calls one), and compiling every pattern at start-up was most of
// Compile's cost. Tools that share a pattern share the matcher.
type pattern struct {
	src  string
	once sync.Once
	re   *regexp.Regexp
}

func (p *pattern) MatchString(s string) bool {
	p.once.Do(func() { p.re, _ = regexp.Compile(p.src) }) // parsed by newPattern
	return p.re != nil && p.re.MatchString(s)             // fails closed
}

func (p *pattern) String() string { return p.src }

var (
	patterns     sync.Map // src -> *pattern
	patternCount atomic.Int32
)

// maxShared bounds the patterns kept for sharing (a gateway that mirrors
// many servers' tools keeps compiling its own beyond it).
const maxShared = 4096

// newPattern checks src with the parser regexp.Compile uses, and returns
// its (shared) lazily compiled matcher.
func newPattern(src string) (*pattern, error) {
	if p, ok := patterns.Load(src); ok {
		return p.(*pattern), nil
	}
	if _, err := syntax.Parse(src, syntax.Perl); err != nil {
		return nil, err
	}
	p := &pattern{src: src}
	if patternCount.Load() >= maxShared {
		return p, nil
	}
	actual, loaded := patterns.LoadOrStore(src, p)
	if !loaded {
		patternCount.Add(1)
	}
	return actual.(*pattern), nil
}
