package ot

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/bulwarkmcp/bulwark/kernel/untrusted"
)

// MarshalJSON encodes o as the crate does: [retain, -delete, "insert", …].
// The empty operation is [], never null. Strings are escaped like serde_json:
// only '"', '\\' and control characters.
func (o *Operation) MarshalJSON() ([]byte, error) {
	if err := o.Err(); err != nil {
		return nil, err
	}
	return o.appendJSON(nil), nil
}

// AppendJSON appends the JSON encoding of a valid o to dst.
func (o *Operation) appendJSON(dst []byte) []byte {
	dst = append(dst, '[')
	for i, c := range o.parts() {
		if i > 0 {
			dst = append(dst, ',')
		}
		switch c.kind {
		case Retain:
			dst = strconv.AppendInt(dst, int64(c.n), 10)
		case Delete:
			dst = strconv.AppendInt(dst, -int64(c.n), 10)
		case Insert:
			dst = AppendJSONString(dst, c.text)
		}
	}
	return append(dst, ']')
}

// AppendJSONString appends s, valid UTF-8, as a JSON string escaped the way
// serde_json escapes: '"' and '\\', control characters as \n \t \r \b \f or
// \u00XX; everything else raw.
func AppendJSONString[T string | []byte](dst []byte, s T) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\t':
			dst = append(dst, '\\', 't')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\b':
			dst = append(dst, '\\', 'b')
		case '\f':
			dst = append(dst, '\\', 'f')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		start = i + 1
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// UnmarshalJSON decodes an operation strictly, as the server would accept
// it, and normalises it through the builder. On error o is left unchanged.
func (o *Operation) UnmarshalJSON(data []byte) error {
	p, err := Parse(data)
	if err != nil {
		return err
	}
	*o = *p
	return nil
}

// Parse decodes the JSON encoding of an operation. It rejects what the
// server rejects: anything but an array, floats and exponents, -0, integers
// beyond int64, null, lone surrogate escapes and invalid UTF-8. Errors wrap
// [ErrMalformedJSON] (or [ErrInvalidOperation] for a length overflow).
func Parse(data []byte) (*Operation, error) { return parse(data, false) }

// ParseNormal is Parse that also rejects encodings not already in builder
// normal form (zero-length parts, neighbours of one kind, an insert after a
// delete). Operations the Rustpad server sends are always normal, so a
// client can use it to refuse a History no real server would produce.
func ParseNormal(data []byte) (*Operation, error) { return parse(data, true) }

func parse(data []byte, normal bool) (*Operation, error) {
	if !utf8.Valid(data) {
		return nil, fmt.Errorf("%w: invalid utf-8", ErrMalformedJSON)
	}
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '[' {
		return nil, fmt.Errorf("%w: not an array", ErrMalformedJSON)
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(data, &elems); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformedJSON, err)
	}
	o := sized(len(elems))
	for i, e := range elems {
		n := o.Len()
		kind, err := parseElement(o, bytes.TrimSpace(e))
		if err == nil && normal && (o.Len() != n+1 || o.comps[n].kind != kind) {
			err = fmt.Errorf("not in normal form")
		}
		if err != nil {
			return nil, fmt.Errorf("%w: element %d: %v", ErrMalformedJSON, i, err)
		}
	}
	if err := o.Err(); err != nil {
		return nil, err
	}
	return o, nil
}

// parseElement appends one element to o and returns its kind.
func parseElement(o *Operation, e []byte) (Kind, error) {
	if len(e) == 0 {
		return 0, fmt.Errorf("empty element")
	}
	switch c := e[0]; {
	case c == '"':
		if untrusted.HasLoneSurrogate(e) {
			return 0, fmt.Errorf("lone surrogate escape")
		}
		var s string
		if err := json.Unmarshal(e, &s); err != nil {
			return 0, err
		}
		o.Insert(s)
		return Insert, nil
	case c == '-' || (c >= '0' && c <= '9'):
		n, err := parseInt(e)
		if err != nil {
			return 0, err
		}
		if n < 0 {
			o.Delete(int(-n))
			return Delete, nil
		}
		o.Retain(int(n))
		return Retain, nil
	}
	return 0, fmt.Errorf("neither integer nor string")
}

// parseInt accepts a JSON integer: no fraction, no exponent, no -0, and a
// magnitude that fits int64 (MinInt64 excluded).
func parseInt(e []byte) (int64, error) {
	if bytes.ContainsAny(e, ".eE") {
		return 0, fmt.Errorf("not an integer")
	}
	if string(e) == "-0" {
		return 0, fmt.Errorf("-0 is a float")
	}
	n, err := strconv.ParseInt(string(e), 10, 64)
	if err != nil || n > math.MaxInt || n < -math.MaxInt {
		return 0, fmt.Errorf("integer out of range")
	}
	return n, nil
}

// ValidText reports whether raw JSON text holds only characters, as
// serde_json (and so the Rustpad server) requires: valid UTF-8 and no
// \uD800–\uDFFF escape outside a high-low pair. encoding/json would turn
// such an escape into U+FFFD without a word. The scan is the kernel's
// (untrusted.HasLoneSurrogate), the one that also refuses tool arguments.
func ValidText(raw []byte) bool {
	return utf8.Valid(raw) && !untrusted.HasLoneSurrogate(raw)
}
