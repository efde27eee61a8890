package jsonscan

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"
)

// plainASCII[c] and plainHTMLASCII[c] are the ASCII bytes encoding/json
// copies as they are, without and with HTML escaping.
var plainASCII, plainHTMLASCII = func() (plain, html [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		plain[c] = c != '"' && c != '\\'
		html[c] = plain[c] && c != '<' && c != '>' && c != '&'
	}
	return plain, html
}()

// AppendHTMLString appends s as a JSON string exactly as encoding/json's
// Marshal writes a string (its appendString with HTML escaping): <, > and
// & as \u003c, \u003e, \u0026, control characters as \b \f \n \r \t or
// \u00XX, invalid UTF-8 as \ufffd, U+2028 and U+2029 escaped. It is the
// encoder of the kernel's hand-written JSON writers (the fast path's
// results, the audit's records), which must give encoding/json's bytes.
func AppendHTMLString(b []byte, s string) []byte { return AppendString(b, s, true) }

// AppendString appends s as a JSON string exactly as encoding/json writes
// it with HTML escaping on (html) or off (an Encoder after
// SetEscapeHTML(false)): like AppendHTMLString, but <, > and & are copied
// when html is false.
func AppendString(b []byte, s string, html bool) []byte {
	const hex = "0123456789abcdef"
	plain := &plainASCII
	if html {
		plain = &plainHTMLASCII
	}
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if plain[c] {
				i += 1 + plainRun(s[i+1:], html) // the rest of the run (plainrun.go)
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i++
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// AppendMarshal appends what json.Marshal writes for v, without its
// reflection for the values DecodeObject builds — map[string]any, []any,
// string, float64, bool and nil — and through json.Marshal for any other
// value inside. FuzzAppendMarshal compares the two.
func AppendMarshal(b []byte, v any) ([]byte, error) {
	switch v := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case bool:
		return strconv.AppendBool(b, v), nil
	case string:
		return AppendString(b, v, true), nil
	case float64:
		return appendFloat(b, v)
	case []any:
		if v == nil {
			return append(b, "null"...), nil
		}
		return AppendList(b, v, AppendMarshal)
	case map[string]any:
		if v == nil {
			return append(b, "null"...), nil
		}
		return appendMap(b, v, func(b []byte, k string) []byte { return AppendString(b, k, true) }, AppendMarshal)
	}
	enc, err := json.Marshal(v)
	return append(b, enc...), err
}

// AppendList appends a list as an array, each element by value. A nil
// list is written as an empty array.
func AppendList(b []byte, l []any, value func([]byte, any) ([]byte, error)) ([]byte, error) {
	b = append(b, '[')
	for i, x := range l {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = value(b, x); err != nil {
			return b, err
		}
	}
	return append(b, ']'), nil
}

// AppendMap appends a map as an object the way encoding/json does — keys
// sorted bytewise — each key by key and each value by value. A nil map is
// written as an empty object.
func AppendMap(b []byte, m map[string]any, key func([]byte, string) []byte, value func([]byte, any) ([]byte, error)) ([]byte, error) {
	return appendMap(b, m, key, value)
}

func appendMap(b []byte, m map[string]any, key func([]byte, string) []byte, value func([]byte, any) ([]byte, error)) ([]byte, error) {
	var small [8]string
	keys := small[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = key(b, k)
		b = append(b, ':')
		var err error
		if b, err = value(b, m[k]); err != nil {
			return b, err
		}
	}
	return append(b, '}'), nil
}

// appendFloat writes a float64 as encoding/json's float encoder does.
func appendFloat(b []byte, f float64) ([]byte, error) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return b, &json.UnsupportedValueError{Str: strconv.FormatFloat(f, 'g', -1, 64)}
	}
	abs, format := math.Abs(f), byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' { // e-09 to e-9
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, nil
}
