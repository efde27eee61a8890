package untrusted

import (
	"bytes"
	"fmt"
	"slices"
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

// Clean is CleanString, and whether it changed s.
func Clean(s string) (string, bool) {
	if plainASCII(s) {
		return s, false
	}
	var st stats
	out := cleanAppend(nil, s, &st)
	if st.removed == 0 && st.neutralized == 0 && len(out) == len(s) && string(out) == s {
		return s, false
	}
	return string(out), true
}

// Envelope tags as Wrap writes them.
const (
	openTag  = `<untrusted-data source="`
	closeTag = "</untrusted-data>"
)

// CleanEnveloped is Clean for text that holds envelopes Wrap wrote (a tool
// result's text): the envelope's own tags are kept where Wrap writes them —
// an opening tag <untrusted-data source="…"> at the start of a line,
// followed by a newline, and then one closing tag </untrusted-data> at the
// start of a later line — and every other tag, look-alike spelling, closing
// tag without its opening and opening tag inside an open envelope is
// neutralized, as CleanString does.
func CleanEnveloped(s string) (string, bool) {
	if plainASCII(s) {
		return s, false
	}
	keep := envelopeTags(s)
	if len(keep) == 0 {
		return Clean(s)
	}
	if plainBetween(s, keep) { // only the kept tags are not plain: nothing to clean
		return s, false
	}
	var st stats
	out := make([]byte, 0, len(s)+16)
	last := 0
	for _, t := range keep {
		out = cleanAppend(out, s[last:t[0]], &st)
		out = append(out, s[t[0]:t[1]]...)
		last = t[1]
	}
	out = cleanAppend(out, s[last:], &st)
	if st.removed == 0 && st.neutralized == 0 && string(out) == s {
		return s, false
	}
	return string(out), true
}

// envelopeTags returns the [start, end) of each envelope tag of s that
// CleanEnveloped keeps, in order: opening and closing tags alternate.
func envelopeTags(s string) [][2]int {
	var keep [][2]int
	open := false
	for i := 0; i < len(s); i++ {
		j := strings.IndexByte(s[i:], '<')
		if j < 0 {
			break
		}
		if i += j; i > 0 && s[i-1] != '\n' {
			continue
		}
		if !open {
			if n := openingTag(s[i:]); n > 0 {
				keep = append(keep, [2]int{i, i + n})
				open = true
				i += n - 1
			}
			continue
		}
		if strings.HasPrefix(s[i:], closeTag) && (i+len(closeTag) == len(s) || s[i+len(closeTag)] == '\n') {
			keep = append(keep, [2]int{i, i + len(closeTag)})
			open = false
			i += len(closeTag) - 1
		}
	}
	if open { // an opening tag never closed is not the envelope's
		keep = keep[:len(keep)-1]
	}
	return keep
}

// plainBetween reports whether every byte of s outside the tags of keep
// is one cleanAppend copies unchanged.
func plainBetween(s string, keep [][2]int) bool {
	last := 0
	for _, t := range keep {
		if plainRun(s, last) < t[0] {
			return false
		}
		last = t[1]
	}
	return plainRun(s, last) == len(s)
}

// openingTag returns the length of the opening tag, with its newline, that
// s starts with, as Wrap writes it (the source attribute as attr leaves it),
// or 0.
func openingTag(s string) int {
	if !strings.HasPrefix(s, openTag) {
		return 0
	}
	for i := len(openTag); i < len(s); i++ {
		switch c := s[i]; {
		case c == '"':
			if strings.HasPrefix(s[i:], "\">\n") {
				return i + 3
			}
			return 0
		case c == '<' || c == '>' || c == '&' || c < 0x20 || c == 0x7f:
			return 0
		}
	}
	return 0
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
	for i+8 <= len(s) && plainBits(load8(s[i:])) {
		i += 8
	}
	for ; i < len(s); i++ {
		c := s[i]
		if (c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c >= 0x7f || c == '<' {
			break
		}
	}
	return i
}

// plainWord reports whether each of the eight bytes of w is printable
// ASCII other than '<' (a word holding tab or a newline is not, and is
// read byte by byte): the classic tests for a byte below n,
// (x - n×0x01…) &^ x & 0x80…, above n, ((x + (127-n)×0x01…) | x) & 0x80…,
// and equal to '<'.
func plainWord(w string) bool { return plainBits(load8(w)) }

// load8 reads the first eight bytes of w as a little-endian number (one
// load).
func load8(w string) uint64 {
	_ = w[7]
	return uint64(w[0]) | uint64(w[1])<<8 | uint64(w[2])<<16 | uint64(w[3])<<24 |
		uint64(w[4])<<32 | uint64(w[5])<<40 | uint64(w[6])<<48 | uint64(w[7])<<56
}

// plainBits is plainWord of the word x.
func plainBits(x uint64) bool {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	lt := x ^ (lo * '<')
	return ((x-lo*0x20)&^x|(x+lo*(127-0x7e)|x)|(lt-lo)&^lt)&hi == 0
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
// allowed anywhere between them. Each rune is compared by what it reads as
// (fold): its Unicode skeleton (UTS #39), lower-cased.
func tagAt(s string, i int) bool {
	const want = "/" + tagName // the '/' is optional
	_, n := utf8.DecodeRuneInString(s[i:])
	p := 0
	var buf [16]rune
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

// fold appends what r reads as, in lower case: nothing for an invisible
// character or a combining mark, ' ' for any space, '-' for '_', and
// otherwise r's skeleton — its compatibility decomposition (NFKD) without
// combining marks, each character mapped to its prototype by Unicode's
// confusables table (confusables_table.go, UTS #39) or the few look-alikes
// of '<' and '-' it does not list (extraConfusable), decomposed again the
// same way. It runs only on the few runes after a '<' or its look-alike.
func fold(r rune, dst []rune) []rune {
	if r < utf8.RuneSelf {
		return foldASCII(r, dst)
	}
	if classify(r) != keep {
		return dst
	}
	if unicode.IsSpace(r) || unicode.Is(unicode.Zs, r) {
		return append(dst, ' ')
	}
	var b [utf8.UTFMax * 8]byte
	for _, c := range string(norm.NFKD.AppendString(b[:0], string(r))) {
		if c < utf8.RuneSelf {
			dst = foldASCII(c, dst)
			continue
		}
		if unicode.In(c, unicode.Mn, unicode.Me) || classify(c) != keep {
			continue
		}
		if x, ok := extraConfusable(unicode.ToLower(c)); ok {
			dst = append(dst, x)
			continue
		}
		p, ok := prototype(c)
		if !ok {
			p, ok = prototype(unicode.ToLower(c))
		}
		if !ok {
			dst = append(dst, unicode.ToLower(c))
			continue
		}
		for _, x := range norm.NFKD.String(p) {
			switch {
			case x < utf8.RuneSelf:
				dst = foldASCII(x, dst)
			case !unicode.In(x, unicode.Mn, unicode.Me):
				dst = append(dst, unicode.ToLower(x))
			}
		}
	}
	return dst
}

// foldASCII is fold of an ASCII character.
func foldASCII(r rune, dst []rune) []rune {
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

// prototype is r's prototype in Unicode's confusables table.
func prototype(r rune) (string, bool) {
	i, ok := slices.BinarySearch(confSrc[:], r)
	if !ok {
		return "", false
	}
	return confTo[confOff[i]:confOff[i+1]], true
}

// ltLike reports '<' and the runes whose fold starts with '<' (ltRunes,
// generated with the table; TestLtRunes holds the two equal).
func ltLike(r rune) bool {
	if r == '<' {
		return true
	}
	if r < utf8.RuneSelf {
		return false
	}
	if _, ok := slices.BinarySearch(ltRunes[:], r); ok {
		return true
	}
	c, ok := extraConfusable(r)
	return ok && c == '<'
}

// extraConfusable maps look-alikes that Unicode's confusables table does
// not map to the tag's characters: angle brackets a reader takes for '<'
// (and the forms that decompose to them), dashes and marks taken for a
// hyphen, and letters a hostile review used (r with fishhook or long leg).
func extraConfusable(r rune) (rune, bool) {
	switch r {
	case 0x3008, 0x2329, 0x27e8, 0x276c, 0x29fc, 0x227a, 0x2280, 0xfe3f:
		return '<', true
	case 0x2014, 0x2015, 0x2e3a, 0x2e3b, 0x30fc, 0xff3f, 0x058a, 0x05be:
		return '-', true
	case 0x027e, 0x027c:
		return 'r', true
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
		cut := CutIndex(out, limit)
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
