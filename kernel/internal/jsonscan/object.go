package jsonscan

import (
	"errors"
	"strconv"
	"unicode/utf8"
)

// ErrNotObject: DecodeObject's input is one JSON value without a repeated
// key, but encoding/json would not decode it into a map[string]any (it is
// not an object, or it holds a number out of float64's range).
var ErrNotObject = errors.New("jsonscan: not a JSON object encoding/json decodes")

// DecodeObject is CheckUnique and then encoding/json's Unmarshal into a
// map[string]any, in one pass: it refuses what CheckUnique refuses, with
// the same error, and otherwise gives what Unmarshal gives — numbers as
// float64, arrays as []any (empty, not nil), strings with escapes decoded
// and each byte that is not UTF-8 replaced by U+FFFD, a top-level null as
// a nil map — or ErrNotObject where Unmarshal fails. FuzzDecodeObject
// compares the two.
func DecodeObject(data []byte) (map[string]any, error) {
	d := objectDecoder{s: Scanner{Data: data}}
	v, err := d.value(0)
	switch {
	case err != nil:
		return nil, err
	case !d.s.AtEnd():
		return nil, ErrSyntax
	case d.outOfRange:
		return nil, ErrNotObject
	}
	switch v := v.(type) {
	case map[string]any:
		return v, nil
	case nil:
		return nil, nil // Unmarshal sets the map to nil
	}
	return nil, ErrNotObject
}

type objectDecoder struct {
	s          Scanner
	outOfRange bool // a number ParseFloat refuses: Unmarshal fails, after CheckUnique's errors
}

// value reads one value as walk(depth, true) does, building it.
func (d *objectDecoder) value(depth int) (any, error) {
	s := &d.s
	switch s.Peek() {
	case '{':
		m := map[string]any{}
		var keys KeySet
		err := s.Members(depth+1, func(key []byte) error {
			if err := keys.check(key); err != nil {
				return err
			}
			v, err := d.value(depth + 1)
			m[string(key)] = v
			return err
		})
		return m, err
	case '[':
		a := []any{}
		err := s.Elements(depth+1, func() error {
			v, err := d.value(depth + 1)
			a = append(a, v)
			return err
		})
		return a, err
	case '"':
		raw, esc, err := s.String()
		if err != nil {
			return nil, err
		}
		return stringValue(raw, esc)
	case 't', 'f', 'n':
		c := s.Data[s.Pos]
		if err := s.Scalar(); err != nil {
			return nil, err
		}
		if c == 'n' {
			return nil, nil
		}
		return c == 't', nil
	}
	start := s.Pos
	if err := s.Scalar(); err != nil {
		return nil, err
	}
	f, err := strconv.ParseFloat(string(s.Data[start:s.Pos]), 64)
	if err != nil {
		d.outOfRange = true
		return nil, nil
	}
	return f, nil
}

// stringValue is a string as encoding/json decodes it: escapes decoded,
// then every byte that does not start a valid UTF-8 sequence as U+FFFD.
func stringValue(raw []byte, esc bool) (string, error) {
	b := raw
	if esc {
		var err error
		if b, err = Unescape(make([]byte, 0, len(raw)), raw); err != nil {
			return "", err
		}
	}
	if utf8.Valid(b) {
		return string(b), nil
	}
	out := make([]byte, 0, len(b)+8)
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		if r == utf8.RuneError && size == 1 {
			out = utf8.AppendRune(out, utf8.RuneError)
		} else {
			out = append(out, b[:size]...)
		}
		b = b[size:]
	}
	return string(out), nil
}
