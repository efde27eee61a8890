package jsonscan

import (
	"bytes"
	"unicode/utf16"
	"unicode/utf8"
)

// decode appends the decoded form of a string's raw content (as String
// returns it) to dst. It gives exactly what encoding/json gives for the
// same string, except that raw bytes that are not UTF-8 are refused
// (ErrUTF8) instead of replaced: a caller that reads a value must not read
// it differently from another decoder.
func decode(dst, raw []byte) ([]byte, error) {
	if !utf8.Valid(raw) {
		return dst, ErrUTF8
	}
	return Unescape(dst, raw)
}

// AppendDecoded appends the decoded form of a string's raw content (as
// String returns it) to dst, as DecodeString decodes it: for a caller that
// reuses one buffer.
func AppendDecoded(dst, raw []byte) ([]byte, error) { return decode(dst, raw) }

// DecodeString is decode for a string, with a fast path for raw content
// without escapes.
func DecodeString(raw []byte, escaped bool) (string, error) {
	if !escaped {
		if !utf8.Valid(raw) {
			return "", ErrUTF8
		}
		return string(raw), nil
	}
	b, err := decode(make([]byte, 0, len(raw)), raw)
	return string(b), err
}

// Unescape appends raw with its escapes decoded to dst, copying other bytes
// as they are (valid UTF-8 or not). A lone or reversed surrogate becomes
// U+FFFD, as in encoding/json. Malformed escapes are ErrSyntax (String has
// already refused them in scanned input).
func Unescape(dst, raw []byte) ([]byte, error) {
	for i := 0; i < len(raw); {
		if raw[i] != '\\' {
			// the run up to the next escape, copied at once
			j := bytes.IndexByte(raw[i:], '\\')
			if j < 0 {
				return append(dst, raw[i:]...), nil
			}
			dst = append(dst, raw[i:i+j]...)
			i += j
		}
		var n int
		if dst, n = appendEscape(dst, raw[i:]); n == 0 {
			return dst, ErrSyntax
		}
		i += n
	}
	return dst, nil
}

// appendEscape appends the decoded form of the escape b starts with (at
// its backslash) to dst and returns how many bytes of b it read: 2, 6, or
// 12 for a surrogate pair escaped as two; 0 when the escape is malformed.
// Unescape and Scanner.StringDecoded both decode escapes with it.
func appendEscape(dst, b []byte) ([]byte, int) {
	n := escapeLen(b[1:])
	if n == 0 {
		return dst, 0
	}
	switch e := b[1]; e {
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
		r, used := surrogatePair(b[2:])
		dst = utf8.AppendRune(dst, r)
		n = used + 1
	default: // '"', '\\', '/'
		dst = append(dst, e)
	}
	return dst, 1 + n
}

// surrogatePair decodes the 4 hex digits of a \u escape (b starts at the
// digits), joining a high surrogate with the low one escaped right after
// it. used is how many bytes of b it read.
func surrogatePair(b []byte) (r rune, used int) {
	r = hex4(b)
	if !utf16.IsSurrogate(r) {
		return r, 4
	}
	if len(b) >= 10 && b[4] == '\\' && b[5] == 'u' && escapeLen(b[5:]) == 5 {
		if d := utf16.DecodeRune(r, hex4(b[6:])); d != utf8.RuneError {
			return d, 10
		}
	}
	return utf8.RuneError, 4
}

func hex4(b []byte) rune {
	return rune(hexVal(b[0])<<12 | hexVal(b[1])<<8 | hexVal(b[2])<<4 | hexVal(b[3]))
}
