package untrusted

import (
	"bytes"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// How a rune is treated by CleanString.
const (
	keep    = iota
	strip   // removed: zero-width, tag and variation characters, controls
	visible // replaced by a visible [U+XXXX] marker: bidirectional controls
)

// classify says what happens to r. Tabs, newlines and carriage returns are
// kept; every other C0 and C1 control is removed.
func classify(r rune) int {
	switch {
	case r < 0x20:
		if r == '\t' || r == '\n' || r == '\r' {
			return keep
		}
		return strip
	case r < 0x7f:
		return keep
	case r <= 0x9f: // DEL and the C1 controls
		return strip
	}
	switch r {
	case 0x00ad, 0x034f, 0x115f, 0x1160, 0x17b4, 0x17b5, 0x180e, 0x3164, 0xfeff, 0xffa0:
		return strip
	case 0x061c, 0x200e, 0x200f:
		return visible
	}
	switch {
	case r >= 0x200b && r <= 0x200d, // zero-width space, non-joiner, joiner
		r >= 0x2060 && r <= 0x2064,   // word joiner, invisible operators
		r >= 0x206a && r <= 0x206f,   // deprecated format characters
		r >= 0xfe00 && r <= 0xfe0f,   // variation selectors
		r >= 0xfff9 && r <= 0xfffb,   // interlinear annotation
		r >= 0xe0000 && r <= 0xe007f, // tag characters ("ASCII smuggling")
		r >= 0xe0100 && r <= 0xe01ef: // variation selectors supplement
		return strip
	case r >= 0x202a && r <= 0x202e, // embeddings and overrides
		r >= 0x2066 && r <= 0x2069: // isolates
		return visible
	}
	return keep
}

// CleanString removes invisible characters, makes bidirectional controls
// visible as [U+XXXX] and neutralizes envelope tags. Use it for any short
// upstream-derived text outside an Envelope (log lines, progress messages).
func CleanString(s string) string {
	if plainASCII(s) {
		return s
	}
	var st stats
	return string(cleanAppend(nil, s, &st))
}

// plainASCII reports whether s is printable ASCII with no '<': such a string
// needs no cleaning.
func plainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= 0x7f || c == '<' {
			if c == '\t' || c == '\n' || c == '\r' {
				continue
			}
			return false
		}
	}
	return true
}

// plainRun returns the end of the run of bytes from i that cleanAppend
// copies unchanged: printable ASCII other than '<', tab, newline and
// carriage return.
func plainRun(s string, i int) int {
	for ; i < len(s); i++ {
		c := s[i]
		if (c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c >= 0x7f || c == '<' {
			break
		}
	}
	return i
}

type stats struct {
	removed, neutralized int
	bidi                 int // of removed: bidirectional controls made visible
}

// IsInvisible reports whether CleanString removes r or marks it visible:
// zero-width, tag and variation characters, controls other than tab and
// newline, and bidirectional controls.
func IsInvisible(r rune) bool { return classify(r) != keep }

// Marks counts what CleanString would change in a string.
type Marks struct {
	Invisible int // characters removed: zero-width, tag and variation characters, controls
	Bidi      int // bidirectional controls, made visible as [U+XXXX]
	Tags      int // envelope tags, look-alike spellings included, neutralized
}

// Inspect counts what CleanString would change in s, by the same rules:
// scanners (servers/gateway/pin's description scan) report it rather than
// repeat the rules.
func Inspect(s string) Marks {
	if plainASCII(s) {
		return Marks{}
	}
	var st stats
	cleanAppend(nil, s, &st)
	return Marks{Invisible: st.removed - st.bidi, Bidi: st.bidi, Tags: st.neutralized}
}

// cleanAppend appends the cleaned s to dst. Invalid UTF-8 becomes U+FFFD.
func cleanAppend(dst []byte, s string, st *stats) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if j := plainRun(s, i); j > i { // copied as they are, at once
				dst = append(dst, s[i:j]...)
				i = j
				continue
			}
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

const tagName = "untrusted-data"

// tagAt reports whether the rune at s[i] — '<' or a look-alike of it (see
// ltLike) — opens or closes an untrusted-data tag as a model could read it:
// '<', an optional '/', then the name, with spaces and invisible characters
// allowed anywhere between them. Each rune is folded first (see fold):
// compatibility forms (full-width, small-form, ligatures, mathematical
// letters) by NFKC, Unicode spaces to one space, and common confusables
// (Cyrillic and Greek letters that look Latin, dashes and '_' for the
// hyphen, look-alike slashes) to what they look like.
func tagAt(s string, i int) bool {
	const want = "/" + tagName // the '/' is optional
	_, n := utf8.DecodeRuneInString(s[i:])
	p := 0
	var buf [8]rune
	for j := i + n; j < len(s); {
		r, size := utf8.DecodeRuneInString(s[j:])
		j += size
		for _, f := range fold(r, buf[:0]) {
			if f == ' ' {
				continue
			}
			if p == 0 && f != '/' {
				p = 1
			}
			if f != rune(want[p]) {
				return false
			}
			if p++; p == len(want) {
				return true
			}
		}
	}
	return false
}

// fold appends what r looks like to a reader, in lower case: nothing for an
// invisible character, ' ' for any space, '-' for '_', the confusable's
// Latin letter or ASCII sign, or else r's NFKC form (folded the same way).
// It runs only on the few runes after a '<' or its look-alike.
func fold(r rune, dst []rune) []rune {
	if r < utf8.RuneSelf {
		switch {
		case r == '_':
			return append(dst, '-')
		case unicode.IsSpace(r):
			return append(dst, ' ')
		case r < 0x20 || r == 0x7f:
			return dst
		}
		return append(dst, rune(lower(byte(r))))
	}
	if classify(r) != keep {
		return dst
	}
	if unicode.IsSpace(r) || unicode.Is(unicode.Zs, r) {
		return append(dst, ' ')
	}
	if c, ok := confusable(unicode.ToLower(r)); ok {
		return append(dst, c)
	}
	var b [utf8.UTFMax * 4]byte
	nf := norm.NFKC.AppendString(b[:0], string(r))
	for _, x := range string(nf) {
		x = unicode.ToLower(x)
		if c, ok := confusable(x); ok {
			x = c
		} else if x == '_' {
			x = '-'
		}
		dst = append(dst, x)
	}
	return dst
}

// ltLike reports '<' and the runes that look like it, NFKC's (small-form
// and full-width) among them.
func ltLike(r rune) bool {
	c, ok := confusable(r)
	return r == '<' || ok && c == '<'
}

// confusable maps a (lower-case) rune that looks like a character of an
// envelope tag to that character. It is not a full confusables table
// (Unicode TR39): it covers the tag's own letters and signs.
func confusable(r rune) (rune, bool) {
	switch r {
	case 0xfe64, 0xff1c, 0x2039, 0x02c2, 0x3008, 0x2329, 0x27e8, 0x276e, 0x276c, 0x29fc, 0x1438, 0x227a:
		return '<', true
	case 0xff0f, 0x2215, 0x2044, 0x29f8, 0x2571:
		return '/', true
	case 0x2010, 0x2011, 0x2012, 0x2013, 0x2014, 0x2015, 0x2212, 0x2043, 0x02d7, 0x2e3a, 0x2e3b,
		0xfe58, 0xfe63, 0xff0d, 0x2796, 0x058a, 0x05be, 0x30fc, 0xff3f:
		return '-', true
	case 0x0430, 0x03b1, 0x0251, 0x237a: // а α ɑ ⍺
		return 'a', true
	case 0x0501, 0x217e: // ԁ ⅾ
		return 'd', true
	case 0x0435, 0x03b5, 0x0454, 0x04bd, 0x212e: // е ε є ҽ ℮
		return 'e', true
	case 0x0578, 0x03b7, 0x03bd, 0x043f, 0x0273: // ո η ν (Ν) п ɳ
		return 'n', true
	case 0x0433, 0x1d26, 0x2c85: // г ᴦ ⲅ
		return 'r', true
	case 0x0455, 0x01bd, 0xa731: // ѕ ƽ ꜱ
		return 's', true
	case 0x03c4, 0x0442, 0x1d1b: // τ т ᴛ
		return 't', true
	case 0x057d, 0x03c5, 0x028b, 0x1d1c, 0xa79f: // ս υ ʋ ᴜ ꞟ
		return 'u', true
	}
	return 0, false
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// Text sanitizes plain text (a zone file, a pad, an advisory): it is cleaned
// like CleanString and, when longer than MaxResult bytes, cut at a line
// boundary near the limit.
func (e *Envelope) Text(s string) (string, Report) {
	rep := Report{OriginalSize: len(s)}
	if len(s) <= e.maxResult() && plainASCII(s) {
		return s, rep // nothing to clean or cut: cleanAppend would copy it
	}
	var st stats
	out := cleanAppend(make([]byte, 0, min(len(s), e.maxResult())+16), s, &st)
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

// HasLoneSurrogate reports whether raw JSON text contains a \uD800–\uDFFF
// escape that is not part of a high-low surrogate pair. Such an escape is no
// character: encoding/json silently turns it into U+FFFD, serde_json (and so
// a Rustpad server) rejects it. The kernel refuses tool arguments holding
// one; servers/rustpad/ot.ValidText uses it for what the Rustpad server
// rejects.
func HasLoneSurrogate(raw []byte) bool {
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' { // on to the next backslash at once (most bytes are not one)
			j := bytes.IndexByte(raw[i:], '\\')
			if j < 0 {
				return false
			}
			i += j
		}
		if i+1 >= len(raw) {
			continue
		}
		if raw[i+1] != 'u' {
			i++ // skip the escaped character, e.g. the second '\' of "\\"
			continue
		}
		v, ok := hex4(raw, i+2)
		switch {
		case !ok:
			i++
		case v >= 0xDC00 && v <= 0xDFFF:
			return true
		case v >= 0xD800 && v <= 0xDBFF:
			lo, ok := uint16(0), false
			if i+11 < len(raw) && raw[i+6] == '\\' && raw[i+7] == 'u' {
				lo, ok = hex4(raw, i+8)
			}
			if !ok || lo < 0xDC00 || lo > 0xDFFF {
				return true
			}
			i += 11
		default:
			i += 5
		}
	}
	return false
}

func hex4(b []byte, i int) (uint16, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var v uint16
	for _, c := range b[i : i+4] {
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, false
		}
		v = v<<4 | uint16(d)
	}
	return v, true
}
