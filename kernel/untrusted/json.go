package untrusted

import (
	"errors"
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// ErrInvalidJSON is returned by JSON for input that is not one JSON value.
var ErrInvalidJSON = errors.New("untrusted: invalid JSON")

// maxKey is the longest object key kept whole, in characters.
const maxKey = 256

// ErrTooDeep is returned by JSON for documents nested deeper than MaxDepth.
var ErrTooDeep = errors.New("untrusted: JSON nested too deeply")

// MaxDepth is the deepest nesting JSON accepts.
const MaxDepth = 128

// markerReserve is kept free under MaxResult for the truncation markers that
// close every open level.
const markerReserve = 64 + MaxDepth*48

// JSON sanitizes one JSON document in a single pass: it redacts, cuts long
// strings, cleans every key and string, and truncates structurally so that the
// output is valid JSON of at most MaxResult bytes. Numbers and literals are
// copied as they are.
func (e *Envelope) JSON(doc []byte) ([]byte, Report, error) {
	w := writer{
		in:        doc,
		out:       make([]byte, 0, min(len(doc), e.maxResult())+256),
		maxString: e.maxString(),
		limit:     e.maxResult() - markerReserve,
	}
	w.rep.OriginalSize = len(doc)
	w.skipSpace()
	if err := w.value(0); err != nil {
		return nil, Report{}, err
	}
	w.skipSpace()
	if w.pos != len(doc) {
		return nil, Report{}, ErrInvalidJSON
	}
	w.rep.Removed, w.rep.Neutralized = w.st.removed, w.st.neutralized
	w.rep.Truncated = w.stopped
	if len(w.out) > e.maxResult() {
		// Only long keys on a deep path can get here; keep the guarantee.
		w.rep.Truncated = true
		w.out = []byte(`{"_truncated":"the result was too large and too deeply nested to cut structurally"}`)
	}
	return w.out, w.rep, nil
}

type writer struct {
	in        []byte
	pos       int
	out       []byte
	maxString int
	limit     int
	stopped   bool // the output is full: every level leaves out the rest
	rep       Report
	st        stats
	scratch   []byte
}

func (w *writer) skipSpace() {
	for w.pos < len(w.in) {
		switch w.in[w.pos] {
		case ' ', '\t', '\n', '\r':
			w.pos++
		default:
			return
		}
	}
}

func (w *writer) value(depth int) error {
	if depth > MaxDepth {
		return ErrTooDeep
	}
	if w.pos >= len(w.in) {
		return ErrInvalidJSON
	}
	switch c := w.in[w.pos]; {
	case c == '{':
		return w.object(depth)
	case c == '[':
		return w.array(depth)
	case c == '"':
		return w.str()
	default:
		return w.scalar()
	}
}

// scalar copies a number or a literal after checking its form.
func (w *writer) scalar() error {
	start := w.pos
	for w.pos < len(w.in) {
		c := w.in[w.pos]
		if c == ',' || c == '}' || c == ']' || c == ' ' || c == '\t' || c == '\n' || c == '\r' {
			break
		}
		w.pos++
	}
	tok := w.in[start:w.pos]
	switch string(tok) {
	case "true", "false", "null":
	default:
		if !validNumber(tok) {
			return ErrInvalidJSON
		}
	}
	w.out = append(w.out, tok...)
	return nil
}

func validNumber(b []byte) bool {
	i := 0
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	default:
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			return false
		}
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			return false
		}
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	}
	return i == len(b)
}

func (w *writer) object(depth int) error { return w.container(depth, '{', '}') }

func (w *writer) array(depth int) error { return w.container(depth, '[', ']') }

// container copies an object or an array element by element. Once the
// output is full, the rest is skipped (still checked) and counted, and a
// marker says how much was left out.
func (w *writer) container(depth int, open, close byte) error {
	w.pos++
	w.out = append(w.out, open)
	written, omitted := 0, 0
	w.skipSpace()
	if w.pos < len(w.in) && w.in[w.pos] == close {
		w.pos++
		w.out = append(w.out, close)
		return nil
	}
	for {
		w.skipSpace()
		wrote, err := w.element(depth, open == '{', written > 0)
		if err != nil {
			return err
		}
		if wrote {
			written++
		} else {
			omitted++
		}
		w.skipSpace()
		if w.pos >= len(w.in) {
			return ErrInvalidJSON
		}
		if w.in[w.pos] == ',' {
			w.pos++
			continue
		}
		if w.in[w.pos] != close {
			return ErrInvalidJSON
		}
		w.pos++
		break
	}
	w.marker(open == '{', written, omitted)
	w.out = append(w.out, close)
	return nil
}

// element copies one array item or object member (key, colon, value) and
// reports whether it was written or left out.
func (w *writer) element(depth int, member, comma bool) (bool, error) {
	var key []byte
	if member {
		var err error
		if key, err = w.memberKey(); err != nil {
			return false, err
		}
	}
	if w.stopped {
		return false, w.skip(depth + 1)
	}
	mark := w.out
	if comma {
		w.out = append(w.out, ',')
	}
	var err error
	if member {
		w.appendString(key, true)
		w.out = append(w.out, ':')
		err = w.member(key, depth)
	} else {
		err = w.value(depth + 1)
	}
	if err != nil {
		return false, err
	}
	return !w.overflow(mark), nil
}

// memberKey reads an object key and its colon.
func (w *writer) memberKey() ([]byte, error) {
	if w.pos >= len(w.in) || w.in[w.pos] != '"' {
		return nil, ErrInvalidJSON
	}
	raw, err := w.readString()
	if err != nil {
		return nil, err
	}
	w.skipSpace()
	if w.pos >= len(w.in) || w.in[w.pos] != ':' {
		return nil, ErrInvalidJSON
	}
	w.pos++
	w.skipSpace()
	return raw, nil
}

// marker closes a container that left elements out with a note saying how
// many.
func (w *writer) marker(object bool, written, omitted int) {
	if omitted == 0 {
		return
	}
	w.rep.Omitted += omitted
	if written > 0 {
		w.out = append(w.out, ',')
	}
	if object {
		w.out = fmt.Appendf(w.out, `"_truncated":"%d more member(s) left out"`, omitted)
	} else {
		w.out = fmt.Appendf(w.out, `"[truncated: %d more item(s) left out]"`, omitted)
	}
}

// member writes the value of key raw: redacted when the key looks secret.
func (w *writer) member(rawKey []byte, depth int) error {
	if secretKey(rawKey) {
		if err := w.skip(depth + 1); err != nil {
			return err
		}
		w.rep.Redacted++
		w.out = append(w.out, `"`+Redacted+`"`...)
		return nil
	}
	return w.value(depth + 1)
}

// overflow handles an element just written after mark: when a scalar pushed
// the output over the limit, the element is taken back and the output stops.
// A container that stopped inside itself keeps what it wrote.
func (w *writer) overflow(mark []byte) bool {
	if w.stopped || len(w.out) <= w.limit {
		return false
	}
	w.out = w.out[:len(mark)]
	w.stopped = true
	return true
}

// skip passes over one value without writing it, checking its form.
func (w *writer) skip(depth int) error {
	saved, savedStopped := w.out, w.stopped
	savedRep, savedSt := w.rep, w.st
	w.stopped = true
	err := w.value(depth)
	w.out, w.stopped, w.rep, w.st = saved, savedStopped, savedRep, savedSt
	return err
}

func (w *writer) str() error {
	raw, err := w.readString()
	if err != nil {
		return err
	}
	if w.stopped {
		return nil // skipping: nothing is written
	}
	w.appendString(raw, false)
	return nil
}

// readString returns the raw bytes between the quotes of the string at pos
// and moves past it.
func (w *writer) readString() ([]byte, error) {
	start := w.pos + 1
	for i := start; i < len(w.in); i++ {
		switch c := w.in[i]; {
		case c == '"':
			w.pos = i + 1
			return w.in[start:i], nil
		case c == '\\':
			n, ok := escapeLen(w.in[i+1:])
			if !ok {
				return nil, ErrInvalidJSON
			}
			i += n
		case c < 0x20:
			return nil, ErrInvalidJSON
		}
	}
	return nil, ErrInvalidJSON
}

// escapeLen checks the escape after a backslash and returns its length.
func escapeLen(b []byte) (int, bool) {
	if len(b) == 0 {
		return 0, false
	}
	switch b[0] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return 1, true
	case 'u':
		if len(b) < 5 {
			return 0, false
		}
		for _, c := range b[1:5] {
			if !('0' <= c && c <= '9' || 'a' <= lower(c) && lower(c) <= 'f') {
				return 0, false
			}
		}
		return 5, true
	}
	return 0, false
}

// appendString writes the cleaned, possibly cut, string whose raw (escaped)
// bytes are raw.
func (w *writer) appendString(raw []byte, isKey bool) {
	if len(raw) <= maxKey && plainJSON(raw) || !isKey && len(raw) <= w.maxString && plainJSON(raw) {
		w.out = append(w.out, '"')
		w.out = append(w.out, raw...)
		w.out = append(w.out, '"')
		return
	}
	s, ok := unescape(w.scratch[:0], raw)
	w.scratch = s[:0]
	if !ok {
		s = []byte("[invalid string]")
	}
	clean := cleanAppend(nil, string(s), &w.st)
	limit := w.maxString
	if isKey {
		limit = min(limit, maxKey)
	}
	if n := utf8.RuneCount(clean); n > limit {
		cut := 0
		for i := 0; i < limit; i++ {
			_, size := utf8.DecodeRune(clean[cut:])
			cut += size
		}
		clean = fmt.Appendf(clean[:cut:cut], "…[truncated: %d characters in all]", utf8.RuneCount(s))
		if !isKey {
			w.rep.StringsCut++
		}
	}
	w.out = appendQuoted(w.out, clean)
}

// plainJSON reports whether raw is printable ASCII without escapes or '<'.
func plainJSON(raw []byte) bool {
	for _, c := range raw {
		if c < 0x20 || c >= 0x7f || c == '\\' || c == '<' {
			return false
		}
	}
	return true
}

// unescape decodes the JSON escapes of raw into dst.
func unescape(dst, raw []byte) ([]byte, bool) {
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c != '\\' {
			dst = append(dst, c)
			continue
		}
		i++
		if i >= len(raw) {
			return dst, false
		}
		switch raw[i] {
		case '"', '\\', '/':
			dst = append(dst, raw[i])
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r, n, ok := hexRune(raw[i+1:])
			if !ok {
				return dst, false
			}
			i += n
			dst = utf8.AppendRune(dst, r)
		default:
			return dst, false
		}
	}
	return dst, true
}

// hexRune decodes the 4 hex digits after \u, and a low surrogate's escape
// after a high one. n is how many bytes it used after the 'u'.
func hexRune(b []byte) (rune, int, bool) {
	if len(b) < 4 {
		return 0, 0, false
	}
	v, err := strconv.ParseUint(string(b[:4]), 16, 32)
	if err != nil {
		return 0, 0, false
	}
	r := rune(v)
	if utf16.IsSurrogate(r) {
		if len(b) >= 10 && b[4] == '\\' && b[5] == 'u' {
			if v2, err := strconv.ParseUint(string(b[6:10]), 16, 32); err == nil {
				if d := utf16.DecodeRune(r, rune(v2)); d != utf8.RuneError {
					return d, 10, true
				}
			}
		}
		return utf8.RuneError, 4, true
	}
	return r, 4, true
}

const hexDigits = "0123456789abcdef"

// appendQuoted writes s (valid UTF-8, already cleaned) as a JSON string.
func appendQuoted(dst, s []byte) []byte {
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				dst = append(dst, '\\', c)
			case c == '\n':
				dst = append(dst, '\\', 'n')
			case c == '\r':
				dst = append(dst, '\\', 'r')
			case c == '\t':
				dst = append(dst, '\\', 't')
			case c < 0x20:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			default:
				dst = append(dst, c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(s[i:])
		if r == 0x2028 || r == 0x2029 {
			dst = append(dst, `\u202`...)
			dst = append(dst, hexDigits[r&0xf])
		} else {
			dst = append(dst, s[i:i+n]...)
		}
		i += n
	}
	return append(dst, '"')
}

// secretWords are matched, after dropping '_' and '-' and folding case,
// anywhere in a key.
var secretWords = []string{"tsigkey", "token", "secret", "password", "credential", "apikey", "privatekey", "authorization"}

// secretKey reports whether a raw object key names a secret. The key is
// compared as a model would read it: escapes decoded, invisible characters
// removed, case folded, and everything but letters and digits dropped.
func secretKey(raw []byte) bool {
	if !plainJSON(raw) {
		s, _ := unescape(nil, raw)
		var st stats
		raw = cleanAppend(nil, string(s), &st)
	}
	var buf [64]byte
	norm := buf[:0]
	for _, c := range raw {
		c = lower(c)
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' {
			norm = append(norm, c)
		}
	}
	for _, word := range secretWords {
		if containsFold(norm, word) {
			return true
		}
	}
	return false
}

func containsFold(s []byte, word string) bool {
	for i := 0; i+len(word) <= len(s); i++ {
		if string(s[i:i+len(word)]) == word {
			return true
		}
	}
	return false
}
