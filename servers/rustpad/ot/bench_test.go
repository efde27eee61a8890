package ot

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// history returns a base text and 10,000 single-keystroke-sized edits that
// apply to it in order, like a Rustpad pad's operation log.
func history(tb testing.TB, n int) (string, []*Operation) {
	r := rand.New(rand.NewPCG(7, 11))
	doc := strings.Repeat("héllo wörld 🎉\n", 100)
	text, length := doc, len([]rune(doc))
	ops := make([]*Operation, 0, n)
	for range n {
		pos := r.IntN(length + 1)
		o := New().Retain(pos)
		if r.IntN(4) == 0 && pos < length {
			d := min(1+r.IntN(3), length-pos)
			o.Delete(d).Retain(length - pos - d)
		} else {
			o.Insert("ab€"[:1+r.IntN(2)]).Retain(length - pos)
		}
		var err error
		if text, err = o.Apply(text); err != nil {
			tb.Fatal(err)
		}
		length = o.TargetLen()
		ops = append(ops, o)
	}
	return doc, ops
}

// BenchmarkTransformHistory rebases one stale edit (made at revision 0)
// over a 10,000-operation history, as the server does for a late client.
func BenchmarkTransformHistory(b *testing.B) {
	doc, ops := history(b, 10_000)
	n := len([]rune(doc))
	edit := New().Retain(n / 2).Insert("stale edit").Delete(3).Retain(n - n/2 - 3)
	b.ReportAllocs()
	for b.Loop() {
		e := edit
		for _, h := range ops {
			var err error
			if e, _, err = Transform(e, h); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/10_000, "ns/transform")
}

// BenchmarkApplyHistory replays a 10,000-operation history onto its base
// text, as a client folding a pad's first History message.
func BenchmarkApplyHistory(b *testing.B) {
	doc, ops := history(b, 10_000)
	b.ReportAllocs()
	for b.Loop() {
		text := doc
		for _, o := range ops {
			var err error
			if text, err = o.Apply(text); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/10_000, "ns/apply")
}

// BenchmarkApplyReplace256Ki replaces a full pad (262,144 code points,
// mixed widths) with another of the same size, as set_document would.
func BenchmarkApplyReplace256Ki(b *testing.B) {
	const n = 256 * 1024
	old := strings.Repeat("aé€🎉", n/4)
	repl := strings.Repeat("🎉€éa", n/4)
	op := New().Delete(n).Insert(repl)
	b.SetBytes(int64(len(old) + len(repl)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := op.Apply(old); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseReplace256Ki decodes the JSON of a full-pad replacement.
func BenchmarkParseReplace256Ki(b *testing.B) {
	const n = 256 * 1024
	enc, err := New().Delete(n).Insert(strings.Repeat("aé€🎉", n/4)).MarshalJSON()
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(enc)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(enc); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkApplyRunesHistory256Ki folds 10,000 keystroke edits into a full
// 256 Ki code point pad held as runes, the session's representation,
// beside BenchmarkApplyStringHistory256Ki doing the same on strings.
func BenchmarkApplyRunesHistory256Ki(b *testing.B) {
	doc, ops := fullPadHistory()
	b.ReportAllocs()
	for b.Loop() {
		cur, spare := []rune(doc), make([]rune, 0, len(doc)+16)
		for _, o := range ops {
			next, err := o.ApplyRunes(spare, cur)
			if err != nil {
				b.Fatal(err)
			}
			cur, spare = next, cur
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(ops)), "ns/apply")
}

func BenchmarkApplyStringHistory256Ki(b *testing.B) {
	doc, ops := fullPadHistory()
	b.ReportAllocs()
	for b.Loop() {
		cur := doc
		for _, o := range ops {
			var err error
			if cur, err = o.Apply(cur); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(ops)), "ns/apply")
}

// fullPadHistory is a pad of 250,000 code points and 1,000 one-character
// inserts at spread positions (10,000 on the full pad would take seconds
// per iteration; the per-apply figure is what matters).
func fullPadHistory() (string, []*Operation) {
	const n = 250_000
	doc := strings.Repeat("aé€🎉", n/4)
	ops := make([]*Operation, 1000)
	for i := range ops {
		pos := (i * 7919) % (n + i)
		ops[i] = New().Retain(pos).Insert("x").Retain(n + i - pos)
	}
	return doc, ops
}
