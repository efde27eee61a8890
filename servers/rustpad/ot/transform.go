package ot

import (
	"fmt"
	"unicode/utf8"
)

// reader walks the components of an operation and lets the algorithms
// consume them partially.
type reader struct {
	comps []component
	i     int
	kind  Kind // 0 once exhausted
	n     int
	text  []byte
}

func newReader(o *Operation) reader {
	r := reader{comps: o.parts()}
	r.load()
	return r
}

func (r *reader) load() {
	r.kind = 0
	if r.i < len(r.comps) {
		c := r.comps[r.i]
		r.kind, r.n, r.text = c.kind, c.n, c.text
		r.i++
	}
}

func (r *reader) done() bool { return r.kind == 0 }

// take consumes m (≤ r.n) code points of the current component and returns
// the consumed text of an insert.
func (r *reader) take(m int) []byte {
	var head []byte
	if r.kind == Insert {
		k := byteOffset(r.text, m)
		head, r.text = r.text[:k], r.text[k:]
	}
	r.n -= m
	if r.n == 0 {
		r.load()
	}
	return head
}

// byteOffset returns the byte offset of code point m in valid UTF-8 b.
func byteOffset(b []byte, m int) int {
	i := 0
	for ; m > 0 && i < len(b); m-- {
		if b[i] < utf8.RuneSelf {
			i++
			continue
		}
		_, size := utf8.DecodeRune(b[i:])
		i += size
	}
	return i
}

func sized(n int) *Operation { return &Operation{comps: make([]component, 0, n)} }

func valid(ops ...*Operation) error {
	for _, o := range ops {
		if err := o.Err(); err != nil {
			return err
		}
	}
	return nil
}

// Transform rebases two concurrent operations a and b on the same text:
// it returns a′ and b′ with apply(apply(S, a), b′) == apply(apply(S, b), a′).
// When both insert at the same position, a's insert goes first (the
// operational-transform 0.6.1 rule; the server passes the incoming client
// edit as a).
func Transform(a, b *Operation) (aPrime, bPrime *Operation, err error) {
	if err := valid(a, b); err != nil {
		return nil, nil, err
	}
	if a.BaseLen() != b.BaseLen() {
		return nil, nil, fmt.Errorf("%w: transform of base lengths %d and %d",
			ErrLengthMismatch, a.BaseLen(), b.BaseLen())
	}
	ap, bp := sized(a.Len()+b.Len()), sized(a.Len()+b.Len())
	ra, rb := newReader(a), newReader(b)
	for !ra.done() || !rb.done() {
		switch {
		case ra.kind == Insert:
			n := ra.n
			insertText(ap, ra.take(n), n)
			bp.Retain(n)
		case rb.kind == Insert:
			n := rb.n
			ap.Retain(n)
			insertText(bp, rb.take(n), n)
		case ra.done() || rb.done():
			return nil, nil, fmt.Errorf("%w: transform of incompatible operations", ErrLengthMismatch)
		default:
			transformStep(ap, bp, &ra, &rb)
		}
	}
	if err := valid(ap, bp); err != nil {
		return nil, nil, err
	}
	return ap, bp, nil
}

// transformStep handles two retains or deletes, consuming the shorter.
func transformStep(ap, bp *Operation, ra, rb *reader) {
	m := min(ra.n, rb.n)
	switch {
	case ra.kind == Retain && rb.kind == Retain:
		ap.Retain(m)
		bp.Retain(m)
	case ra.kind == Delete && rb.kind == Retain:
		ap.Delete(m)
	case ra.kind == Retain && rb.kind == Delete:
		bp.Delete(m)
	}
	ra.take(m)
	rb.take(m)
}

// Compose merges consecutive operations a and b into one operation c with
// apply(S, c) == apply(apply(S, a), b). a's target length must equal b's
// base length.
func Compose(a, b *Operation) (*Operation, error) {
	if err := valid(a, b); err != nil {
		return nil, err
	}
	if a.TargetLen() != b.BaseLen() {
		return nil, fmt.Errorf("%w: compose of target length %d with base length %d",
			ErrLengthMismatch, a.TargetLen(), b.BaseLen())
	}
	c := sized(a.Len() + b.Len())
	ra, rb := newReader(a), newReader(b)
	for !ra.done() || !rb.done() {
		switch {
		case ra.kind == Delete:
			c.Delete(ra.n)
			ra.take(ra.n)
		case rb.kind == Insert:
			n := rb.n
			insertText(c, rb.take(n), n)
		case ra.done() || rb.done():
			return nil, fmt.Errorf("%w: compose of incompatible operations", ErrLengthMismatch)
		default:
			composeStep(c, &ra, &rb)
		}
	}
	if err := c.Err(); err != nil {
		return nil, err
	}
	return c, nil
}

// composeStep handles a's retain or insert against b's retain or delete.
func composeStep(c *Operation, ra, rb *reader) {
	m := min(ra.n, rb.n)
	switch {
	case ra.kind == Retain && rb.kind == Retain:
		c.Retain(m)
	case ra.kind == Insert && rb.kind == Retain:
		insertText(c, ra.take(m), m)
		rb.take(m)
		return
	case ra.kind == Retain && rb.kind == Delete:
		c.Delete(m)
	}
	ra.take(m)
	rb.take(m)
}

// TransformIndex moves a cursor offset (in code points) through o, as the
// Rustpad server moves stored cursors: an insert at the cursor moves it
// right, a delete around it pulls it to the deletion's start.
func TransformIndex(o *Operation, pos int) int {
	if pos < 0 {
		return pos
	}
	d, r := pos, pos
	for _, c := range o.parts() {
		switch c.kind {
		case Retain:
			d -= c.n
		case Insert:
			r += c.n
		case Delete:
			r -= min(d, c.n)
			d -= c.n
		}
		if d < 0 {
			break
		}
	}
	return r
}
