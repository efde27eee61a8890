package egress

import (
	"bytes"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/rangetable"

	"github.com/bulwarkmcp/bulwark/kernel/untrusted"
)

// Redacted replaces every secret found.
const Redacted = untrusted.Redacted

// ignorableTable holds the code points a reader does not see, which an
// upstream could put inside a secret to hide it: format characters (Cf:
// soft hyphen, zero-width characters, bidirectional controls, Unicode tags),
// the other default-ignorable code points (Hangul fillers, the combining
// grapheme joiner) and variation selectors.
var ignorableTable = rangetable.Merge(unicode.Cf, unicode.Other_Default_Ignorable_Code_Point, unicode.Variation_Selector)

// ignorable reports whether r is left out when secrets are looked for:
// what ignorableTable holds, and what untrusted.CleanString removes or
// marks (controls other than tab, newline and carriage return).
func ignorable(r rune) bool {
	if r < utf8.RuneSelf {
		return (r < 0x20 && r != '\t' && r != '\n' && r != '\r') || r == 0x7f
	}
	return untrusted.IsInvisible(r) || unicode.Is(ignorableTable, r)
}

// view is a normalized copy of a text: b, and for each byte of b (and one
// past its end) the offset in the text where what produced it starts.
type view struct {
	b  []byte
	at []int32
}

// shown reports whether s is its own view without ignorable runes:
// printable ASCII, tab, newline and carriage return.
func shown(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 0x7f || (c < 0x20 && c != '\t' && c != '\n' && c != '\r') {
			return false
		}
	}
	return true
}

// visible returns the view of s without its ignorable runes (bytes that
// are not UTF-8 are kept, one by one).
func visible(s []byte, at []int32) view {
	v := view{b: make([]byte, 0, len(s)), at: make([]int32, 0, len(s)+1)}
	for i := 0; i < len(s); {
		if n := marker(s[i:]); n > 0 { // a control CleanString made visible: as unseen as the control
			i += n
			continue
		}
		r, n := utf8.DecodeRune(s[i:])
		if n == 1 && r == utf8.RuneError || !ignorable(r) {
			v.b = append(v.b, s[i:i+n]...)
			for range n {
				v.at = append(v.at, at[i])
			}
		}
		i += n
	}
	v.at = append(v.at, at[len(s)])
	return v
}

// marker returns the length of the "[U+XXXX]" that s starts with when it
// stands for a character untrusted.CleanString makes visible (a
// bidirectional control), or 0: text cleaned before the gate reads it
// must not hide a secret split by such controls either.
func marker(s []byte) int {
	if len(s) < 8 || s[0] != '[' || s[1] != 'U' || s[2] != '+' {
		return 0
	}
	end := bytes.IndexByte(s[:min(len(s), 10)], ']')
	if end < 7 {
		return 0
	}
	var r rune
	for _, c := range s[3:end] {
		if hexVal(c) < 0 {
			return 0
		}
		r = r<<4 | rune(hexVal(c))
	}
	if !untrusted.IsInvisible(r) {
		return 0
	}
	return end + 1
}

// identity is the offsets of s in s.
func identity(n int) []int32 {
	at := make([]int32, n+1)
	for i := range at {
		at[i] = int32(i)
	}
	return at
}

// unescaped returns s with one level of escapes decoded — JSON's \uXXXX
// (surrogate pairs joined), \", \\ and \/, and percent-encoding's %XX — and
// whether it found any: text that quotes JSON or a URL can carry a secret
// in those forms.
func unescaped(s []byte) (view, bool) {
	v := view{b: make([]byte, 0, len(s)), at: make([]int32, 0, len(s)+1)}
	found := false
	for i := 0; i < len(s); {
		c, n := s[i], 1
		switch {
		case c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			c, n = byte(hexVal(s[i+1])<<4|hexVal(s[i+2])), 3
		case c == '\\' && i+1 < len(s) && (s[i+1] == '"' || s[i+1] == '\\' || s[i+1] == '/'):
			c, n = s[i+1], 2
		case c == '\\' && i+5 < len(s) && s[i+1] == 'u' && isHex4(s[i+2:i+6]):
			r, used := escapedRune(s[i:])
			start := len(v.b)
			v.b = utf8.AppendRune(v.b, r)
			for range len(v.b) - start {
				v.at = append(v.at, int32(i))
			}
			i += used
			found = true
			continue
		}
		found = found || n > 1
		v.b = append(v.b, c)
		v.at = append(v.at, int32(i))
		i += n
	}
	v.at = append(v.at, int32(len(s)))
	return v, found
}

// escapedRune decodes the \uXXXX escape at the start of s, with the low
// surrogate escaped right after a high one; it returns how many bytes it
// read.
func escapedRune(s []byte) (rune, int) {
	r := hex4(s[2:6])
	if r >= 0xd800 && r < 0xdc00 && len(s) >= 12 && s[6] == '\\' && s[7] == 'u' && isHex4(s[8:12]) {
		if lo := hex4(s[8:12]); lo >= 0xdc00 && lo < 0xe000 {
			return 0x10000 + (r-0xd800)<<10 + (lo - 0xdc00), 12
		}
	}
	return r, 6
}

func isHex(c byte) bool { return hexVal(c) >= 0 }

func isHex4(b []byte) bool {
	return len(b) >= 4 && isHex(b[0]) && isHex(b[1]) && isHex(b[2]) && isHex(b[3])
}

func hexVal(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c && c <= 'f':
		return int(c-'a') + 10
	case 'A' <= c && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

func hex4(b []byte) rune {
	return rune(hexVal(b[0])<<12 | hexVal(b[1])<<8 | hexVal(b[2])<<4 | hexVal(b[3]))
}

// Scrub returns t with every secret of the set replaced by Redacted, and
// how many it replaced. It looks in t as a reader sees it — invisible and
// format characters left out — and in that text with one level of escapes
// decoded; a secret is also found base64-encoded at any offset, and as a
// prefix of at least four bytes right before a cut marker ("…" or
// "\n[truncated: "). Replacing a finding replaces every character that
// produced it, invisible ones included.
func (s *Secrets) Scrub(t string) (string, int) {
	if s.Len() == 0 || t == "" {
		return t, 0
	}
	spans := s.spans(nil, t)
	if len(spans) == 0 {
		return t, 0
	}
	return redact(t, spans)
}

// Contains reports whether t holds a secret of the set, as Scrub finds it.
func (s *Secrets) Contains(t string) bool {
	return s.Len() > 0 && t != "" && len(s.spans(nil, t)) > 0
}

// spans appends where in t the set's secrets are, in t's offsets.
func (s *Secrets) spans(dst []span, t string) []span {
	m := s.m
	if shown(t) && !strings.Contains(t, "[U+") {
		dst = m.find(dst, t)
		dst = m.cuts(dst, t)
	} else {
		raw := []byte(t)
		dst = visible(raw, identity(len(raw))).find(m, dst)
	}
	if strings.ContainsAny(t, `\%`) {
		if dec, ok := unescaped([]byte(t)); ok {
			dst = visible(dec.b, dec.at).find(m, dst)
		}
	}
	return dst
}

// find appends the spans of v that hold a secret, in the original text's
// offsets.
func (v view) find(m *matcher, dst []span) []span {
	start := len(dst)
	text := string(v.b)
	dst = m.find(dst, text)
	dst = m.cuts(dst, text)
	for i := start; i < len(dst); i++ {
		dst[i] = span{int(v.at[dst[i].start]), int(v.at[dst[i].end])}
	}
	return dst
}

// redact replaces the spans of t, merged where they overlap.
func redact(t string, spans []span) (string, int) {
	slices.SortFunc(spans, func(a, b span) int { return a.start - b.start })
	out := make([]byte, 0, len(t))
	last, n := 0, 0
	for i := 0; i < len(spans); {
		sp := spans[i]
		for i++; i < len(spans) && spans[i].start <= sp.end; i++ {
			sp.end = max(sp.end, spans[i].end)
		}
		out = append(append(out, t[last:sp.start]...), Redacted...)
		last = sp.end
		n++
	}
	return string(append(out, t[last:]...)), n
}
