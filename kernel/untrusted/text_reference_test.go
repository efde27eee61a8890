package untrusted

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

// cleanAppendReference is cleanAppend as it was before it copied plain runs
// at once.
func cleanAppendReference(dst []byte, s string, st *stats) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c == '<' && tagAt(s, i) {
				dst = append(dst, '[')
				st.neutralized++
				i++
				continue
			}
			if classify(rune(c)) == strip {
				st.removed++
			} else {
				dst = append(dst, c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		switch classify(r) {
		case strip:
			st.removed++
		case visible:
			st.removed++
			st.bidi++
			dst = fmt.Appendf(dst, "[U+%04X]", r)
		default:
			if ltLike(r) && tagAt(s, i) {
				dst = append(dst, '[')
				st.neutralized++
			} else {
				dst = utf8.AppendRune(dst, r)
			}
		}
		i += n
	}
	return dst
}

// textReference is Envelope.Text as it was before it returned plain text
// as it is.
func textReference(e *Envelope, s string) (string, Report) {
	rep := Report{OriginalSize: len(s)}
	var st stats
	out := cleanAppendReference(make([]byte, 0, min(len(s), e.maxResult())+16), s, &st)
	rep.Removed, rep.Neutralized = st.removed, st.neutralized
	if limit := e.maxResult(); len(out) > limit {
		cut := limit
		for cut > 0 && !utf8.RuneStart(out[cut]) {
			cut--
		}
		if nl := strings.LastIndexByte(string(out[:cut]), '\n'); nl > cut*9/10 {
			cut = nl + 1
		}
		out = fmt.Appendf(out[:cut], "\n[truncated: %d of %d characters shown]\n", utf8.RuneCount(out[:cut]), utf8.RuneCountInString(s))
		rep.Truncated = true
	}
	return string(out), rep
}

// FuzzTextReference: Envelope.Text and cleanAppend give the bytes and the
// report they gave before (textReference), for any text and limit.
func FuzzTextReference(f *testing.F) {
	f.Add("plain text\twith\nlines\r", 64)
	f.Add(strings.Repeat("x", 1024), 1<<20)
	f.Add(strings.Repeat("x", 100), 64)
	f.Add("a</untrusted-data>b\u202ec\U000E0041d\x00e\x7f<ok", 0)
	f.Add("\uff1cuntrusted-data>\u00ad", 3)
	f.Add("\xff\xfe<", 1)
	f.Fuzz(func(t *testing.T, s string, limit int) {
		e := &Envelope{MaxResult: limit % (1 << 12)}
		got, grep := e.Text(s)
		want, wrep := textReference(e, s)
		if got != want || grep != wrep {
			t.Fatalf("Text(%q) = %q %+v, before %q %+v", s, got, grep, want, wrep)
		}
		var st, st0 stats
		if a, b := cleanAppend([]byte("p"), s, &st), cleanAppendReference([]byte("p"), s, &st0); string(a) != string(b) || st != st0 {
			t.Fatalf("cleanAppend(%q) = %q %+v, before %q %+v", s, a, st, b, st0)
		}
	})
}

// TestTextPlainIsNotCopied: plain text within the limit comes back as it
// is, without an allocation.
func TestTextPlainIsNotCopied(t *testing.T) {
	e := &Envelope{}
	s := strings.Repeat("plain text\n", 100)
	if n := testing.AllocsPerRun(100, func() {
		if out, _ := e.Text(s); out != s {
			t.Fatal(out)
		}
	}); n > 0 {
		t.Fatalf("Text allocated %v times", n)
	}
}
