// Package jsonscan is the kernel's one JSON grammar (RFC 8259): whitespace,
// numbers, literals, strings and their escapes, read in place without
// building values, and the one string decoder that agrees with
// encoding/json. The transport guards (httpguard, which reads a JSON-RPC
// message) and the envelope (untrusted, which rewrites a result) both scan
// with it, so the two can never disagree on what a string, a number or an
// escape is. It imports neither of them: it owns its errors, and callers
// map them to their own.
package jsonscan

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"slices"
	"unicode/utf8"
)

// Errors returned by the scanner. Use errors.Is.
var (
	// ErrSyntax: the input is not JSON.
	ErrSyntax = errors.New("jsonscan: invalid JSON")
	// ErrDepth: the input nests deeper than the scanner's MaxDepth.
	ErrDepth = errors.New("jsonscan: JSON nested too deeply")
	// ErrUTF8: a decoded string is not valid UTF-8.
	ErrUTF8 = errors.New("jsonscan: string is not UTF-8")
	// ErrDuplicateKey: an object repeats a key (compared after decoding).
	ErrDuplicateKey = errors.New("jsonscan: duplicate object key")
	// ErrValues: the input holds more values than the scanner's MaxValues.
	ErrValues = errors.New("jsonscan: more JSON values than allowed")
)

// DefaultMaxDepth is the nesting a zero MaxDepth allows: the go-sdk
// decoder's cap.
const DefaultMaxDepth = 1000

// Scanner walks JSON text. Data is the input and Pos the offset of the next
// byte to read; MaxDepth caps nesting (DefaultMaxDepth when zero).
// MaxValues, when positive, caps what Skip may read: every value (object,
// array, string, number, literal) and every object key counts one, so that
// a caller can bound what decoding the input would build before building
// any of it; Values reports the count so far.
type Scanner struct {
	Data      []byte
	Pos       int
	MaxDepth  int
	MaxValues int
	Values    int
}

// count charges one value (or key) against MaxValues.
func (s *Scanner) count() error {
	s.Values++
	if s.MaxValues > 0 && s.Values > s.MaxValues {
		return fmt.Errorf("over %d values: %w", s.MaxValues, ErrValues)
	}
	return nil
}

func (s *Scanner) maxDepth() int {
	if s.MaxDepth <= 0 {
		return DefaultMaxDepth
	}
	return s.MaxDepth
}

// SkipSpace moves past JSON whitespace.
func (s *Scanner) SkipSpace() {
	for s.Pos < len(s.Data) {
		switch s.Data[s.Pos] {
		case ' ', '\t', '\n', '\r':
			s.Pos++
		default:
			return
		}
	}
}

// Peek skips whitespace and returns the next byte, or 0 at the end.
func (s *Scanner) Peek() byte {
	s.SkipSpace()
	if s.Pos >= len(s.Data) {
		return 0
	}
	return s.Data[s.Pos]
}

// AtEnd skips whitespace and reports whether the input is used up.
func (s *Scanner) AtEnd() bool {
	s.SkipSpace()
	return s.Pos == len(s.Data)
}

// String reads a string whose opening quote is at Pos and returns its raw
// content (between the quotes, a subslice of Data) and whether it holds
// escapes. Control characters and malformed escapes are ErrSyntax. Raw
// bytes are not checked for UTF-8 here; decode does that.
func (s *Scanner) String() (raw []byte, escaped bool, err error) {
	if s.Pos >= len(s.Data) || s.Data[s.Pos] != '"' {
		return nil, false, ErrSyntax
	}
	start := s.Pos + 1
	for i := start; i < len(s.Data); {
		if i+8 <= len(s.Data) {
			m := specialBytes(binary.LittleEndian.Uint64(s.Data[i:]))
			if m == 0 {
				i += 8 // eight bytes none of which ends the string, escapes or is a control character
				continue
			}
			i += bits.TrailingZeros64(m) / 8 // the first that does
		}
		switch c := s.Data[i]; {
		case c == '"':
			s.Pos = i + 1
			return s.Data[start:i], escaped, nil
		case c == '\\':
			n := escapeLen(s.Data[i+1:])
			if n == 0 {
				return nil, false, ErrSyntax
			}
			escaped = true
			i += 1 + n
		case c < 0x20:
			return nil, false, ErrSyntax
		default:
			i++
		}
	}
	return nil, false, ErrSyntax
}

// StringDecoded is String that also decodes: when the string holds
// escapes, dec is dst with the string's decoded form appended — what
// AppendDecoded(dst, raw) gives, ErrUTF8 included — read in the same pass
// as the scan; without escapes dec is dst as it was, and raw is the
// string. FuzzStringDecoded holds it to String and AppendDecoded.
func (s *Scanner) StringDecoded(dst []byte) (raw, dec []byte, escaped bool, err error) {
	if s.Pos >= len(s.Data) || s.Data[s.Pos] != '"' {
		return nil, dst, false, ErrSyntax
	}
	start := s.Pos + 1
	for i := start; i < len(s.Data); {
		if i+8 <= len(s.Data) {
			m := specialBytes(binary.LittleEndian.Uint64(s.Data[i:]))
			if m == 0 {
				i += 8
				continue
			}
			i += bits.TrailingZeros64(m) / 8
		}
		switch c := s.Data[i]; {
		case c == '"':
			s.Pos = i + 1
			return s.Data[start:i], dst, false, nil
		case c == '\\':
			return s.decodeRest(dst, start, i)
		case c < 0x20:
			return nil, dst, false, ErrSyntax
		default:
			i++
		}
	}
	return nil, dst, false, ErrSyntax
}

// decodeRest is StringDecoded from the string's first escape, at i (the
// string's content starts at start). Decoding never lengthens a string,
// so dst is grown once, to hold the rest of the input and a word more, and
// the bytes between escapes are copied a word at a time as they are
// scanned.
func (s *Scanner) decodeRest(dst []byte, start, i int) (raw, dec []byte, escaped bool, err error) {
	data := s.Data
	b := slices.Grow(dst, i-start+len(data)-i+8)
	b = append(b, data[start:i]...)
	o := len(b)
	b = b[:cap(b)]
	for i < len(data) {
		if i+8 <= len(data) {
			w := binary.LittleEndian.Uint64(data[i:])
			binary.LittleEndian.PutUint64(b[o:], w) // o+8 <= cap(b): decoded bytes never outnumber those read
			m := specialBytes(w)
			if m == 0 {
				i, o = i+8, o+8
				continue
			}
			k := bits.TrailingZeros64(m) / 8
			i, o = i+k, o+k
		}
		switch c := data[i]; {
		case c == '"':
			raw = data[start:i]
			if !utf8.Valid(raw) {
				return nil, dst, false, ErrUTF8
			}
			s.Pos = i + 1
			return raw, b[:o], true, nil
		case c == '\\':
			if i+1 < len(data) && data[i+1] == '"' { // \", most of JSON quoted in a string: appendEscape's, inline
				b[o] = '"'
				i, o = i+2, o+1
				continue
			}
			e, n := appendEscape(b[:o], data[i:])
			if n == 0 {
				return nil, dst, false, ErrSyntax
			}
			i, o = i+n, len(e) // e shares b: within its capacity
		case c < 0x20:
			return nil, dst, false, ErrSyntax
		default:
			b[o] = c
			i, o = i+1, o+1
		}
	}
	return nil, dst, false, ErrSyntax
}

// plainWord reports whether none of the eight bytes of w is '"', '\\' or
// a control character (below 0x20): the classic exact tests for a zero
// byte, (x - 0x01…) &^ x & 0x80…, and for a byte below n (n <= 128),
// (x - n×0x01…) &^ x & 0x80…; bytes of 0x80 and above pass.
func plainWord(w uint64) bool { return specialBytes(w) == 0 }

// specialBytes is plainWord's mask: the high bit of each byte of w (little
// endian) that is '"', '\\' or a control character. A borrow can flag a
// byte above one that is flagged rightly, never one below it, so the
// lowest flagged byte is the first special one.
func specialBytes(w uint64) uint64 {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	q := w ^ (lo * '"')
	b := w ^ (lo * '\\')
	return ((q-lo)&^q | (b-lo)&^b | (w-lo*0x20)&^w) & hi
}

// escapeLen checks the escape after a backslash and returns its length
// (without the backslash), or 0 when it is malformed.
func escapeLen(b []byte) int {
	if len(b) == 0 {
		return 0
	}
	switch b[0] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return 1
	case 'u':
		if len(b) < 5 {
			return 0
		}
		for _, c := range b[1:5] {
			if hexVal(c) < 0 {
				return 0
			}
		}
		return 5
	}
	return 0
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

// Number reads -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? at Pos.
func (s *Scanner) Number() error {
	b, i := s.Data, s.Pos
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		i = digits(b, i)
	default:
		return ErrSyntax
	}
	if i < len(b) && b[i] == '.' {
		j := digits(b, i+1)
		if j == i+1 {
			return ErrSyntax
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(b, i)
		if j == i {
			return ErrSyntax
		}
		i = j
	}
	s.Pos = i
	return nil
}

func digits(b []byte, i int) int {
	for i < len(b) && '0' <= b[i] && b[i] <= '9' {
		i++
	}
	return i
}

// Scalar reads a number or one of the literals true, false and null at Pos.
func (s *Scanner) Scalar() error {
	if s.Pos >= len(s.Data) {
		return ErrSyntax
	}
	switch s.Data[s.Pos] {
	case 't':
		return s.literal("true")
	case 'f':
		return s.literal("false")
	case 'n':
		return s.literal("null")
	}
	return s.Number()
}

func (s *Scanner) literal(lit string) error {
	if len(s.Data)-s.Pos < len(lit) || string(s.Data[s.Pos:s.Pos+len(lit)]) != lit {
		return ErrSyntax
	}
	s.Pos += len(lit)
	return nil
}

// Skip reads one value, checking it, after skipping whitespace. depth is
// the nesting of the value's container (0 at the top). It counts what it
// reads in Values and stops with ErrValues past MaxValues.
func (s *Scanner) Skip(depth int) error { return s.walk(depth, false) }

// walk is Skip; with unique set it also refuses an object that repeats a
// key (see CheckUnique).
func (s *Scanner) walk(depth int, unique bool) error {
	if err := s.count(); err != nil {
		return err
	}
	switch s.Peek() {
	case '{':
		var keys KeySet
		return s.Members(depth+1, func(key []byte) error {
			if err := s.count(); err != nil {
				return err
			}
			if unique {
				if err := keys.check(key); err != nil {
					return err
				}
			}
			return s.walk(depth+1, unique)
		})
	case '[':
		return s.Elements(depth+1, func() error { return s.walk(depth+1, unique) })
	case '"':
		_, _, err := s.String()
		return err
	}
	return s.Scalar()
}

// Members reads an object whose '{' is next, calling fn for each member with
// its key, escapes decoded (bytes that are not UTF-8 are passed on as they
// are: a key compared with a known name can never match), and Pos at the
// value; fn must read the value. depth is the object's own nesting (1 for a
// top-level object).
func (s *Scanner) Members(depth int, fn func(key []byte) error) error {
	if depth > s.maxDepth() {
		return fmt.Errorf("nesting over %d: %w", s.maxDepth(), ErrDepth)
	}
	if s.Peek() != '{' {
		return ErrSyntax
	}
	s.Pos++
	if s.Peek() == '}' {
		s.Pos++
		return nil
	}
	for {
		if s.Peek() != '"' {
			return ErrSyntax
		}
		raw, esc, err := s.String()
		if err != nil {
			return err
		}
		key := raw
		if esc {
			if key, err = Unescape(nil, raw); err != nil {
				return err
			}
		}
		if s.Peek() != ':' {
			return ErrSyntax
		}
		s.Pos++
		s.SkipSpace()
		if err := fn(key); err != nil {
			return err
		}
		switch s.Peek() {
		case ',':
			s.Pos++
		case '}':
			s.Pos++
			return nil
		default:
			return ErrSyntax
		}
	}
}

// Elements reads an array whose '[' is next, calling fn with Pos at each
// element; fn must read it. depth is the array's own nesting.
func (s *Scanner) Elements(depth int, fn func() error) error {
	if depth > s.maxDepth() {
		return fmt.Errorf("nesting over %d: %w", s.maxDepth(), ErrDepth)
	}
	if s.Peek() != '[' {
		return ErrSyntax
	}
	s.Pos++
	if s.Peek() == ']' {
		s.Pos++
		return nil
	}
	for {
		s.SkipSpace()
		if err := fn(); err != nil {
			return err
		}
		switch s.Peek() {
		case ',':
			s.Pos++
		case ']':
			s.Pos++
			return nil
		default:
			return ErrSyntax
		}
	}
}

// isValid reports whether data is exactly one JSON value (with surrounding
// whitespace) nested at most DefaultMaxDepth levels.
func isValid(data []byte) bool {
	s := Scanner{Data: data}
	return s.Skip(0) == nil && s.AtEnd()
}
