package untrusted

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"
)

// HasLoneSurrogate is the one lone-surrogate scan: the kernel refuses tool
// arguments with it, and servers/rustpad/ot (ValidText) decides with it what
// the Rustpad server would reject.
func TestHasLoneSurrogate(t *testing.T) {
	for _, c := range []struct {
		raw  string
		want bool
	}{
		{`"plain"`, false},
		{`"a\ud800b"`, true},           // high alone
		{`"\udc00"`, true},             // low alone
		{`"\uD83C"`, true},             // upper-case hex, still alone
		{`"\udc00\ud800"`, true},       // reversed pair
		{`"\ud83c\udf89"`, false},      // a pair is a character
		{`"\uD83C\uDF89"`, false},      // upper-case pair
		{`"\ud83c\u0041"`, true},       // high before a non-surrogate
		{`"\ud83c\\udf89"`, true},      // the "low" is an escaped backslash and text
		{`"\\ud800"`, false},           // an escaped backslash, then text
		{`"\\\ud800"`, true},           // an escaped backslash, then a lone escape
		{`["\ud83c","\udf89"]`, true},  // a pair split over two strings is two halves
		{`{"k":"\ud800","v":1}`, true}, // anywhere in a document
		{`"\uD83C\uDF8"`, true},        // a short low escape is no low
		{`"\u12"`, false},              // too short to be an escape at all
		{`"\ud83c`, true},              // cut at the end
		{`"🎉 é \u00e9 \u0000"`, false}, // characters, literal and escaped
	} {
		if got := HasLoneSurrogate([]byte(c.raw)); got != c.want {
			t.Errorf("HasLoneSurrogate(%s) = %v, want %v", c.raw, got, c.want)
		}
	}
}

// FuzzHasLoneSurrogate holds the scan to a second reading of the rule on
// every JSON string literal: decode it to UTF-16 code units, then look for a
// surrogate outside a high-low pair. On any other input it must not panic.
func FuzzHasLoneSurrogate(f *testing.F) {
	for _, s := range []string{`"a\ud800b"`, `"\ud83c\udf89"`, `"\\ud800"`, `"\udc00\ud800"`, `"\uD83C\uDF8"`, `"\u12"`, `"\\\ud800"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		got := HasLoneSurrogate(raw)
		if len(raw) < 2 || raw[0] != '"' || !json.Valid(raw) {
			return
		}
		if want := loneInUnits(codeUnits(raw[1 : len(raw)-1])); got != want {
			t.Fatalf("%q: scan %v, code units %v", raw, got, want)
		}
	})
}

// codeUnits decodes the body of a valid JSON string to UTF-16 code units,
// keeping escaped surrogates as they are.
func codeUnits(body []byte) []uint16 {
	var units []uint16
	for i := 0; i < len(body); {
		if body[i] != '\\' {
			r, n := utf8.DecodeRune(body[i:])
			units = utf16.AppendRune(units, r)
			i += n
			continue
		}
		if body[i+1] != 'u' {
			units = append(units, uint16(body[i+1]))
			i += 2
			continue
		}
		v, _ := strconv.ParseUint(string(body[i+2:i+6]), 16, 16)
		units = append(units, uint16(v))
		i += 6
	}
	return units
}

func loneInUnits(units []uint16) bool {
	for i := 0; i < len(units); i++ {
		switch u := units[i]; {
		case u >= 0xD800 && u <= 0xDBFF:
			if i+1 == len(units) || units[i+1] < 0xDC00 || units[i+1] > 0xDFFF {
				return true
			}
			i++
		case u >= 0xDC00 && u <= 0xDFFF:
			return true
		}
	}
	return false
}

// BenchmarkHasLoneSurrogate: the scan of a call's 1 KB arguments without
// an escape, as most are.
func BenchmarkHasLoneSurrogate(b *testing.B) {
	raw := []byte(`{"text":"` + strings.Repeat("x", 1024) + `"}`)
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		if HasLoneSurrogate(raw) {
			b.Fatal("found one")
		}
	}
}
