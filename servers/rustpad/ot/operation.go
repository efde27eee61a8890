package ot

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode/utf8"
)

// Errors reported by this package. Errors returned by functions wrap one of
// them; compare with errors.Is.
var (
	// ErrInvalidOperation reports an operation built from invalid input:
	// a negative count, insert text that is not valid UTF-8, or lengths
	// that overflow int.
	ErrInvalidOperation = errors.New("invalid operation")
	// ErrLengthMismatch reports an operation that does not fit the text or
	// the other operation it is combined with.
	ErrLengthMismatch = errors.New("operation length mismatch")
	// ErrInvalidText reports a document that is not valid UTF-8.
	ErrInvalidText = errors.New("text is not valid utf-8")
	// ErrMalformedJSON reports an operation encoding the server would reject.
	ErrMalformedJSON = errors.New("malformed operation json")
)

// Kind is the kind of one component of an operation.
type Kind uint8

// The component kinds.
const (
	Retain Kind = iota + 1 // keep N code points
	Delete                 // remove N code points
	Insert                 // insert Text (N code points)
)

// String returns the lowercase name of the kind.
func (k Kind) String() string {
	switch k {
	case Retain:
		return "retain"
	case Delete:
		return "delete"
	case Insert:
		return "insert"
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// Component is one part of an operation. For Insert, N is the number of code
// points in Text.
type Component struct {
	Kind Kind
	N    int
	Text string
}

// component is the internal form; insert text is kept as owned bytes so that
// merging adjacent inserts appends in amortised constant time.
type component struct {
	kind Kind
	n    int
	text []byte
}

// Operation is a sequence of components over a whole document. The zero
// value and a nil *Operation are the empty operation (base and target length
// zero). Build operations with [New] and the builder methods; an Operation
// must not be copied by value once built (use [Operation.Clone]).
type Operation struct {
	comps  []component
	base   int
	target int
	err    error
}

// New returns an empty operation, ready for the builder methods.
func New() *Operation { return &Operation{} }

// Retain appends "keep n code points". Zero is dropped, a negative n makes the
// operation invalid. It returns o for chaining.
func (o *Operation) Retain(n int) *Operation {
	if !o.grow(n, &o.base) || !o.grow(n, &o.target) || n == 0 {
		return o
	}
	if last := o.last(); last != nil && last.kind == Retain {
		last.n += n
		return o
	}
	o.comps = append(o.comps, component{kind: Retain, n: n})
	return o
}

// Delete appends "remove n code points". Zero is dropped, a negative n makes
// the operation invalid. It returns o for chaining.
func (o *Operation) Delete(n int) *Operation {
	if !o.grow(n, &o.base) || n == 0 {
		return o
	}
	if last := o.last(); last != nil && last.kind == Delete {
		last.n += n
		return o
	}
	o.comps = append(o.comps, component{kind: Delete, n: n})
	return o
}

// Insert appends "insert s". An empty s is dropped; s that is not valid UTF-8
// makes the operation invalid. An insert right after a delete is placed
// before that delete, as the crate does. It returns o for chaining.
func (o *Operation) Insert(s string) *Operation {
	if o.err != nil || s == "" {
		return o
	}
	if !utf8.ValidString(s) {
		o.err = fmt.Errorf("%w: insert text is not valid utf-8", ErrInvalidOperation)
		return o
	}
	insertText(o, s, utf8.RuneCountInString(s))
	return o
}

// insertText appends an insert of valid text s with n code points.
func insertText[T string | []byte](o *Operation, s T, n int) {
	if len(s) == 0 || !o.grow(n, &o.target) {
		return
	}
	k := len(o.comps)
	switch {
	case k > 0 && o.comps[k-1].kind == Insert:
		appendText(&o.comps[k-1], s, n)
	case k > 0 && o.comps[k-1].kind == Delete:
		if k > 1 && o.comps[k-2].kind == Insert {
			appendText(&o.comps[k-2], s, n)
			return
		}
		del := o.comps[k-1]
		o.comps[k-1] = component{kind: Insert, n: n, text: append([]byte(nil), s...)}
		o.comps = append(o.comps, del)
	default:
		o.comps = append(o.comps, component{kind: Insert, n: n, text: append([]byte(nil), s...)})
	}
}

func appendText[T string | []byte](c *component, s T, n int) {
	c.text = append(c.text, s...)
	c.n += n
}

// grow adds n to *total, recording an error for negative n or overflow.
func (o *Operation) grow(n int, total *int) bool {
	switch {
	case o.err != nil:
		return false
	case n < 0:
		o.err = fmt.Errorf("%w: negative count %d", ErrInvalidOperation, n)
		return false
	case n > math.MaxInt-*total:
		o.err = fmt.Errorf("%w: length overflow", ErrInvalidOperation)
		return false
	}
	*total += n
	return true
}

func (o *Operation) last() *component {
	if len(o.comps) == 0 {
		return nil
	}
	return &o.comps[len(o.comps)-1]
}

// Err reports whether the operation was built from invalid input; the error
// wraps [ErrInvalidOperation].
func (o *Operation) Err() error {
	if o == nil {
		return nil
	}
	return o.err
}

// BaseLen is the length in code points of the text the operation applies to.
func (o *Operation) BaseLen() int {
	if o == nil {
		return 0
	}
	return o.base
}

// TargetLen is the length in code points of the text the operation produces.
func (o *Operation) TargetLen() int {
	if o == nil {
		return 0
	}
	return o.target
}

// Len is the number of components.
func (o *Operation) Len() int {
	if o == nil {
		return 0
	}
	return len(o.comps)
}

// Components returns a copy of the components.
func (o *Operation) Components() []Component {
	if o == nil {
		return nil
	}
	out := make([]Component, len(o.comps))
	for i, c := range o.comps {
		out[i] = Component{Kind: c.kind, N: c.n, Text: string(c.text)}
	}
	return out
}

// IsNoop reports whether the operation changes nothing (only retains).
func (o *Operation) IsNoop() bool {
	return o.Len() == 0 || (len(o.comps) == 1 && o.comps[0].kind == Retain)
}

// Clone returns an independent copy of o.
func (o *Operation) Clone() *Operation {
	c := &Operation{}
	if o == nil {
		return c
	}
	c.base, c.target, c.err = o.base, o.target, o.err
	c.comps = make([]component, len(o.comps))
	for i, x := range o.comps {
		c.comps[i] = component{kind: x.kind, n: x.n, text: append([]byte(nil), x.text...)}
	}
	return c
}

// Equal reports whether o and p have the same components.
func (o *Operation) Equal(p *Operation) bool {
	if o.Len() != p.Len() || o.Err() != nil || p.Err() != nil {
		return o.Len() == p.Len() && o.Len() == 0 && o.Err() == nil && p.Err() == nil
	}
	for i := range o.Len() {
		a, b := o.comps[i], p.comps[i]
		if a.kind != b.kind || a.n != b.n || string(a.text) != string(b.text) {
			return false
		}
	}
	return true
}

// String returns the JSON encoding, or a note for an invalid operation.
func (o *Operation) String() string {
	if o.Err() != nil {
		return "<" + o.err.Error() + ">"
	}
	return string(o.appendJSON(nil))
}

// Apply applies the operation to text. The text must be valid UTF-8 and its
// length in code points must equal BaseLen.
func (o *Operation) Apply(text string) (string, error) {
	if err := o.Err(); err != nil {
		return "", err
	}
	var b strings.Builder
	b.Grow(len(text) + o.insertBytes())
	pos := 0
	for _, c := range o.parts() {
		switch c.kind {
		case Retain, Delete:
			end, err := advance(text, pos, c.n)
			if err != nil {
				return "", err
			}
			if c.kind == Retain {
				b.WriteString(text[pos:end])
			}
			pos = end
		case Insert:
			b.Write(c.text)
		}
	}
	if pos != len(text) {
		return "", fmt.Errorf("%w: text is longer than base length %d", ErrLengthMismatch, o.base)
	}
	return b.String(), nil
}

// ApplyRunes is Apply on a text held as code points: it writes the result
// into dst[:0] (growing it as needed) and returns it. dst must not overlap
// text. It costs one copy of the text and suits folding long histories.
func (o *Operation) ApplyRunes(dst, text []rune) ([]rune, error) {
	if err := o.Err(); err != nil {
		return nil, err
	}
	if len(text) != o.BaseLen() {
		return nil, fmt.Errorf("%w: text of %d code points, base length %d", ErrLengthMismatch, len(text), o.base)
	}
	dst = slices.Grow(dst[:0], o.target)
	pos := 0
	for _, c := range o.parts() {
		switch c.kind {
		case Retain:
			dst = append(dst, text[pos:pos+c.n]...)
			pos += c.n
		case Delete:
			pos += c.n
		case Insert:
			for _, r := range string(c.text) {
				dst = append(dst, r)
			}
		}
	}
	return dst, nil
}

// parts returns the internal components; nil-safe.
func (o *Operation) parts() []component {
	if o == nil {
		return nil
	}
	return o.comps
}

func (o *Operation) insertBytes() int {
	n := 0
	for _, c := range o.parts() {
		n += len(c.text)
	}
	return n
}

// advance returns the byte offset n code points after byte offset i in s,
// checking that the code points passed are valid UTF-8.
func advance(s string, i, n int) (int, error) {
	for ; n > 0; n-- {
		if i >= len(s) {
			return 0, fmt.Errorf("%w: text is shorter than the operation", ErrLengthMismatch)
		}
		if s[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			return 0, ErrInvalidText
		}
		i += size
	}
	return i, nil
}
