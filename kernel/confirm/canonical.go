package confirm

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"

	"github.com/bulwarkmcp/bulwark/kernel/internal/jsonscan"
)

// errNotCanonical is returned for input that is not one JSON value.
var errNotCanonical = errors.New("confirm: payload is not a JSON value")

// canonicalJSON encodes one JSON value so that equal payloads give equal bytes:
// object keys sorted, no white space, numbers in one form (1, 1.0 and 1e0 are
// alike; 10 and 10.5 are not), strings as encoding/json writes them. Object
// key order and white space do not matter; list order does.
func canonicalJSON(doc []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, errNotCanonical
	}
	if dec.More() {
		return nil, errNotCanonical
	}
	if _, err := dec.Token(); err == nil {
		return nil, errNotCanonical
	}
	return CanonicalValue(v)
}

// CanonicalValue encodes an already decoded value (from encoding/json, with or
// without UseNumber) the way canonicalJSON does. The values a decoder builds
// (map[string]any, []any, string, float64, json.Number, bool, nil) are
// written directly; any other value inside goes through encoding/json, as
// it always did. FuzzCanonicalValue compares it with the encoder it
// replaced (normalize, then encoding/json).
func CanonicalValue(v any) ([]byte, error) { return AppendCanonical(nil, v) }

// AppendCanonical appends CanonicalValue's encoding of v to b. On error it
// returns b as it was given.
func AppendCanonical(b []byte, v any) ([]byte, error) {
	out, err := appendCanonical(b, v)
	if err != nil {
		return b, errNotCanonical
	}
	return out, nil
}

func appendCanonical(b []byte, v any) ([]byte, error) {
	switch v := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case bool:
		return strconv.AppendBool(b, v), nil
	case string:
		return jsonscan.AppendString(b, v, false), nil
	case float64:
		return appendNumber(b, canonicalNumber(strconv.FormatFloat(v, 'g', -1, 64)))
	case json.Number:
		return appendNumber(b, canonicalNumber(string(v)))
	case []any: // nil too, as []: normalize made every list a non-nil slice
		return jsonscan.AppendList(b, v, appendCanonical)
	case map[string]any: // nil too, as {}
		return jsonscan.AppendMap(b, v, canonicalKey, appendCanonical)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return b, err
	}
	return append(b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...), nil
}

func canonicalKey(b []byte, k string) []byte { return jsonscan.AppendString(b, k, false) }

// appendNumber writes a number as encoding/json writes a json.Number: ""
// as 0, anything that is not a JSON number refused.
func appendNumber(b []byte, s string) ([]byte, error) {
	if s == "" {
		s = "0"
	}
	if !validNumber(s) {
		return b, errNotCanonical
	}
	return append(b, s...), nil
}

// validNumber reports whether s is a JSON number (encoding/json's
// isValidNumber).
func validNumber(s string) bool {
	if s == "" {
		return false
	}
	if s[0] == '-' {
		if s = s[1:]; s == "" {
			return false
		}
	}
	switch {
	case s[0] == '0':
		s = s[1:]
	case '1' <= s[0] && s[0] <= '9':
		s = s[1:]
		for len(s) > 0 && '0' <= s[0] && s[0] <= '9' {
			s = s[1:]
		}
	default:
		return false
	}
	if len(s) >= 2 && s[0] == '.' && '0' <= s[1] && s[1] <= '9' {
		s = s[2:]
		for len(s) > 0 && '0' <= s[0] && s[0] <= '9' {
			s = s[1:]
		}
	}
	if len(s) >= 2 && (s[0] == 'e' || s[0] == 'E') {
		s = s[1:]
		if s[0] == '+' || s[0] == '-' {
			if s = s[1:]; s == "" {
				return false
			}
		}
		for len(s) > 0 && '0' <= s[0] && s[0] <= '9' {
			s = s[1:]
		}
	}
	return s == ""
}

// Fingerprint is the SHA-256 of the canonical encoding of v.
func Fingerprint(v any) ([32]byte, error) {
	b, err := CanonicalValue(v)
	if err != nil {
		return [32]byte{}, err
	}
	return sha256.Sum256(b), nil
}

// canonicalNumber writes a JSON number in one form. Plain decimals are
// rewritten exactly (trailing fraction zeros dropped, "-0" is "0"), so large
// integers keep every digit; numbers with an exponent go through float64.
func canonicalNumber(s string) string {
	if strings.ContainsAny(s, "eE") {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsInf(f, 0) {
			return s
		}
		if f == math.Trunc(f) && math.Abs(f) < 1<<53 {
			return strconv.FormatInt(int64(f), 10)
		}
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	if i := strings.IndexByte(s, '.'); i >= 0 {
		s = strings.TrimRight(s, "0")
		s = strings.TrimSuffix(s, ".")
	}
	if strings.Trim(s, "-0") == "" {
		return "0"
	}
	return s
}
