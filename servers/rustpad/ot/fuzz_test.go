package ot

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// byteSource turns fuzz input into choices; it yields zeros once drained.
type byteSource struct{ b []byte }

func (s *byteSource) next(n int) int {
	if len(s.b) == 0 || n <= 0 {
		return 0
	}
	v := int(s.b[0])
	s.b = s.b[1:]
	return v % n
}

// alphabet mixes one- to four-byte code points, a joiner and a combining mark.
var alphabet = []rune{'a', 'b', ' ', '\n', 'é', 'ß', '€', '𒀇', '🎉', '\u200d', '\u0301', '"', '\\'}

func genText(s *byteSource, max int) string {
	var b strings.Builder
	for n := s.next(max + 1); n > 0; n-- {
		b.WriteRune(alphabet[s.next(len(alphabet))])
	}
	return b.String()
}

// genOp builds a random operation over a text of docLen code points.
func genOp(s *byteSource, docLen int) *Operation {
	o := New()
	for left := docLen; left > 0; {
		n := 1 + s.next(min(left, 5))
		switch s.next(3) {
		case 0:
			o.Retain(n)
			left -= n
		case 1:
			o.Delete(n)
			left -= n
		default:
			o.Insert(genText(s, 4))
		}
	}
	if s.next(2) == 0 {
		o.Insert(genText(s, 3))
	}
	return o
}

// checkNormalised fails on zero-length parts, a delete followed by an insert
// or two neighbours of the same kind.
func checkNormalised(t testing.TB, o *Operation) {
	t.Helper()
	for i, c := range o.parts() {
		if c.n <= 0 || (c.kind == Insert && (len(c.text) == 0 || !utf8.Valid(c.text))) {
			t.Fatalf("%v: bad component %d", o, i)
		}
		if i > 0 {
			p := o.parts()[i-1]
			if p.kind == c.kind || (p.kind == Delete && c.kind == Insert) {
				t.Fatalf("%v: not normalised at %d", o, i)
			}
		}
	}
}

// checkAlgebra checks the transform and compose properties for a random
// document and two random operations drawn from data.
func checkAlgebra(t testing.TB, data []byte) {
	src := &byteSource{b: data}
	doc := genText(src, 24)
	n := utf8.RuneCountInString(doc)
	a, b := genOp(src, n), genOp(src, n)
	checkNormalised(t, a)
	ap, bp, err := Transform(a, b)
	if err != nil {
		t.Fatalf("Transform(%v, %v): %v", a, b, err)
	}
	checkNormalised(t, ap)
	checkNormalised(t, bp)
	left := mustApply(t, bp, mustApply(t, a, doc))
	right := mustApply(t, ap, mustApply(t, b, doc))
	if left != right || !utf8.ValidString(left) {
		t.Fatalf("doc %q a %v b %v: %q != %q", doc, a, b, left, right)
	}
	c := genOp(src, a.TargetLen())
	ac, err := Compose(a, c)
	if err != nil {
		t.Fatalf("Compose(%v, %v): %v", a, c, err)
	}
	checkNormalised(t, ac)
	if got, want := mustApply(t, ac, doc), mustApply(t, c, mustApply(t, a, doc)); got != want {
		t.Fatalf("compose: %q != %q", got, want)
	}
	for pos := 0; pos <= n; pos++ {
		if p := TransformIndex(a, pos); p < 0 || p > a.TargetLen() {
			t.Fatalf("TransformIndex(%v, %d) = %d out of range", a, pos, p)
		}
	}
}

func TestAlgebraProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	data := make([]byte, 256)
	for range 3000 {
		for i := range data {
			data[i] = byte(r.UintN(256))
		}
		checkAlgebra(t, data)
	}
}

// FuzzTransform checks convergence of Transform, the compose law and
// UTF-8 safety for a document and operations derived from the input.
func FuzzTransform(f *testing.F) {
	f.Add([]byte("seed: tie"))
	f.Add([]byte{10, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 200, 201, 202})
	f.Fuzz(func(t *testing.T, data []byte) { checkAlgebra(t, data) })
}

// FuzzParse feeds hostile JSON to the decoder: it must never panic, and any
// accepted operation must be normalised, re-encode to an equal operation and
// produce valid UTF-8 when applied.
func FuzzParse(f *testing.F) {
	for _, s := range []string{`[2,-1,"n",2]`, `["\ud83c\udf89",3,-2]`, `[-0]`, `["\ud800"]`, `null`, `[1e3]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		o, err := Parse(data)
		if err != nil {
			return
		}
		checkNormalised(t, o)
		enc, err := json.Marshal(o)
		if err != nil || !utf8.Valid(enc) {
			t.Fatalf("re-encoding %v: %v", o, err)
		}
		back, err := Parse(enc)
		if err != nil || !back.Equal(o) {
			t.Fatalf("round trip %s: %v %v", enc, back, err)
		}
		if o.BaseLen() > 4096 {
			return
		}
		doc := strings.Repeat("🎉", o.BaseLen())
		out, err := o.Apply(doc)
		if err != nil || !utf8.ValidString(out) || utf8.RuneCountInString(out) != o.TargetLen() {
			t.Fatalf("apply %v: %q %v", o, out, err)
		}
		if runes, err := o.ApplyRunes(nil, []rune(doc)); err != nil || string(runes) != out {
			t.Fatalf("ApplyRunes %v: %q %v", o, string(runes), err)
		}
		if p, err := ParseNormal(data); err == nil && !p.Equal(o) {
			t.Fatalf("ParseNormal %v != Parse %v", p, o)
		}
		if _, err := ParseNormal(enc); err != nil {
			t.Fatalf("our own encoding %s is not normal: %v", enc, err)
		}
	})
}
