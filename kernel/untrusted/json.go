package untrusted

import (
	"errors"
	"fmt"
	"sync"
	"unicode/utf8"

	"github.com/bulwarkmcp/bulwark/kernel/internal/jsonscan"
)

// errInvalidJSON is returned by JSON for input that is not one JSON value.
var errInvalidJSON = errors.New("untrusted: invalid JSON")

// maxKey is the longest object key kept whole, in characters.
const maxKey = 256

// errTooDeep is returned by JSON for documents nested deeper than maxDepth.
var errTooDeep = errors.New("untrusted: JSON nested too deeply")

// maxDepth is the deepest nesting JSON accepts.
const maxDepth = 128

// markerReserve is kept free under MaxResult for the truncation markers that
// close every open level.
const markerReserve = 64 + maxDepth*48

// JSON sanitizes one JSON document in a single pass: it redacts, cuts long
// strings, cleans every key and string, and truncates structurally so that the
// output is valid JSON of at most MaxResult bytes. Numbers and literals are
// copied as they are.
// It refuses input that is not one JSON value, or that nests deeper than
// 128 (maxDepth).
func (e *Envelope) JSON(doc []byte) ([]byte, Report, error) {
	kp := keySets.Get().(*[]*jsonscan.KeySet)
	defer keySets.Put(kp)
	return e.json(doc, kp)
}

// json is JSON with the key sets in *kp, which it leaves empty.
func (e *Envelope) json(doc []byte, kp *[]*jsonscan.KeySet) ([]byte, Report, error) {
	w := writer{
		in:        jsonscan.Scanner{Data: doc},
		out:       make([]byte, 0, min(len(doc), e.maxResult())+256),
		maxString: e.maxString(),
		limit:     e.maxResult() - markerReserve,
	}
	w.rep.OriginalSize = len(doc)
	w.keys = *kp
	defer func() {
		for _, k := range w.keys {
			k.Reset()
		}
		*kp = w.keys
	}()
	w.skipSpace()
	if err := w.value(0); err != nil {
		return nil, Report{}, err
	}
	w.skipSpace()
	if w.in.Pos != len(doc) {
		return nil, Report{}, errInvalidJSON
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
	in        jsonscan.Scanner // the document, read once
	out       []byte
	maxString int
	limit     int
	stopped   bool // the output is full: every level leaves out the rest
	rep       Report
	st        stats
	scratch   []byte
	keys      []*jsonscan.KeySet // by depth: the keys written in the open object (from keySets)
}

// keySets holds the writers' key sets by depth, reused from one document to
// the next; every set is emptied before it goes back, so that the pool
// keeps no reference to a document's output.
var keySets = sync.Pool{New: func() any { return new([]*jsonscan.KeySet) }}

func (w *writer) skipSpace() { w.in.SkipSpace() }

func (w *writer) value(depth int) error {
	if depth > maxDepth {
		return errTooDeep
	}
	if w.in.Pos >= len(w.in.Data) {
		return errInvalidJSON
	}
	switch c := w.in.Data[w.in.Pos]; {
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
	start := w.in.Pos
	if err := w.in.Scalar(); err != nil {
		return errInvalidJSON
	}
	w.out = append(w.out, w.in.Data[start:w.in.Pos]...)
	return nil
}

func (w *writer) object(depth int) error { return w.container(depth, '{', '}') }

func (w *writer) array(depth int) error { return w.container(depth, '[', ']') }

// container copies an object or an array element by element. Once the
// output is full, the rest is skipped (still checked) and counted, and a
// marker says how much was left out.
func (w *writer) container(depth int, open, close byte) error {
	w.in.Pos++
	w.out = append(w.out, open)
	written, omitted := 0, 0
	w.skipSpace()
	if w.in.Pos < len(w.in.Data) && w.in.Data[w.in.Pos] == close {
		w.in.Pos++
		w.out = append(w.out, close)
		return nil
	}
	var keys *jsonscan.KeySet // the keys written, for an object
	if open == '{' {
		keys = w.keySet(depth)
	}
	for {
		w.skipSpace()
		wrote, err := w.element(depth, keys, written > 0)
		if err != nil {
			return err
		}
		if wrote {
			written++
		} else {
			omitted++
		}
		w.skipSpace()
		if w.in.Pos >= len(w.in.Data) {
			return errInvalidJSON
		}
		if w.in.Data[w.in.Pos] == ',' {
			w.in.Pos++
			continue
		}
		if w.in.Data[w.in.Pos] != close {
			return errInvalidJSON
		}
		w.in.Pos++
		break
	}
	w.marker(keys, written, omitted)
	w.out = append(w.out, close)
	return nil
}

// keySet returns an empty set for the keys of an object at depth, reusing
// the one of the last object at that depth (which is closed by now).
func (w *writer) keySet(depth int) *jsonscan.KeySet {
	for len(w.keys) <= depth {
		w.keys = append(w.keys, new(jsonscan.KeySet))
	}
	k := w.keys[depth]
	k.Reset()
	return k
}

// uniqueKey makes the key written at out[start:] differ from every key
// already written in its object. Cleaning removes invisible characters and
// cutting shortens long keys, so two keys of the input can come out the
// same ("note" and "no\u200bte"); decoders then keep one value or the
// other, and the text a model reads disagrees with the structured content
// a client decodes. A repeated key gets a numbered suffix instead:
// "note (2)".
func (w *writer) uniqueKey(keys *jsonscan.KeySet, start int) {
	if keys.Add(w.out[start:]) {
		return
	}
	base := len(w.out) - 1 // before the closing quote
	for n := 2; ; n++ {
		w.out = fmt.Appendf(w.out[:base], ` (%d)"`, n)
		if keys.Add(w.out[start:]) {
			w.rep.KeysRenamed++
			return
		}
	}
}

// element copies one array item or object member (key, colon, value) and
// reports whether it was written or left out.
func (w *writer) element(depth int, keys *jsonscan.KeySet, comma bool) (bool, error) {
	member := keys != nil
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
		start := len(w.out)
		w.appendString(key, true)
		w.uniqueKey(keys, start)
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
	if w.in.Pos >= len(w.in.Data) || w.in.Data[w.in.Pos] != '"' {
		return nil, errInvalidJSON
	}
	raw, err := w.readString()
	if err != nil {
		return nil, err
	}
	w.skipSpace()
	if w.in.Pos >= len(w.in.Data) || w.in.Data[w.in.Pos] != ':' {
		return nil, errInvalidJSON
	}
	w.in.Pos++
	w.skipSpace()
	return raw, nil
}

// marker closes a container that left elements out with a note saying how
// many.
func (w *writer) marker(keys *jsonscan.KeySet, written, omitted int) {
	if omitted == 0 {
		return
	}
	w.rep.Omitted += omitted
	if written > 0 {
		w.out = append(w.out, ',')
	}
	if keys != nil {
		start := len(w.out)
		w.out = append(w.out, `"_truncated"`...)
		w.uniqueKey(keys, start)
		w.out = fmt.Appendf(w.out, `:"%d more member(s) left out"`, omitted)
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
	raw, _, err := w.in.String()
	if err != nil {
		return nil, errInvalidJSON
	}
	return raw, nil
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
	s, err := jsonscan.Unescape(w.scratch[:0], raw)
	w.scratch = s[:0]
	if err != nil { // not from readString, which checked every escape
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
var secretWords = [][]byte{[]byte("tsigkey"), []byte("token"), []byte("secret"), []byte("password"),
	[]byte("credential"), []byte("apikey"), []byte("privatekey"), []byte("authorization")}

// secretKey reports whether a raw object key names a secret. The key is
// compared as a model would read it: escapes decoded, invisible characters
// removed, case folded, and everything but letters and digits dropped.
func secretKey(raw []byte) bool {
	if !plainJSON(raw) {
		s, _ := jsonscan.Unescape(nil, raw)
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
	return hasSecretWord(norm)
}

// hasSecretWord reports whether one of secretWords occurs in norm, in one
// pass: each word is looked for only where its first letter is.
// FuzzSecretKey compares it with a bytes.Contains per word.
func hasSecretWord(norm []byte) bool {
	for i, c := range norm {
		var words []string
		switch c {
		case 't':
			words = secretT
		case 's':
			words = secretS
		case 'p':
			words = secretP
		case 'c':
			words = secretC
		case 'a':
			words = secretA
		default:
			continue
		}
		for _, w := range words {
			if len(norm)-i >= len(w) && string(norm[i:i+len(w)]) == w {
				return true
			}
		}
	}
	return false
}

// secretWords by first letter, for hasSecretWord.
var secretT, secretS, secretP, secretC, secretA = []string{"tsigkey", "token"}, []string{"secret"},
	[]string{"password", "privatekey"}, []string{"credential"}, []string{"apikey", "authorization"}
