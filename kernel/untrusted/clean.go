package untrusted

import (
	"fmt"
	"strings"
	"unicode/utf8"
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

type stats struct {
	removed, neutralized int
}

// cleanAppend appends the cleaned s to dst. Invalid UTF-8 becomes U+FFFD.
func cleanAppend(dst []byte, s string, st *stats) []byte {
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
		i += n
		switch classify(r) {
		case strip:
			st.removed++
		case visible:
			st.removed++
			dst = fmt.Appendf(dst, "[U+%04X]", r)
		default:
			dst = utf8.AppendRune(dst, r)
		}
	}
	return dst
}

const tagName = "untrusted-data"

// tagAt reports whether s[i] == '<' opens or closes an untrusted-data tag:
// '<', optional spaces, an optional '/', optional spaces, then the name in any
// case. Invisible characters between the parts would be removed before a
// model sees them, so they are skipped here too.
func tagAt(s string, i int) bool {
	j := skipFiller(s, i+1)
	if j < len(s) && s[j] == '/' {
		j = skipFiller(s, j+1)
	}
	for k := 0; k < len(tagName); k++ {
		j = skipInvisible(s, j)
		if j >= len(s) || lower(s[j]) != tagName[k] {
			return false
		}
		j++
	}
	return true
}

func skipFiller(s string, j int) int {
	for j < len(s) {
		if s[j] == ' ' || s[j] == '\t' || s[j] == '\n' || s[j] == '\r' {
			j++
			continue
		}
		k := skipInvisible(s, j)
		if k == j {
			return j
		}
		j = k
	}
	return j
}

func skipInvisible(s string, j int) int {
	for j < len(s) {
		c := s[j]
		if c < utf8.RuneSelf {
			if c < 0x20 && c != '\t' && c != '\n' && c != '\r' || c == 0x7f {
				j++
				continue
			}
			return j
		}
		r, n := utf8.DecodeRuneInString(s[j:])
		if classify(r) == keep {
			return j
		}
		j += n
	}
	return j
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
