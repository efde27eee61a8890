package confirm

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"
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
// without UseNumber) the way canonicalJSON does.
func CanonicalValue(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(normalize(v)); err != nil {
		return nil, errNotCanonical
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// Fingerprint is the SHA-256 of the canonical encoding of v.
func Fingerprint(v any) ([32]byte, error) {
	b, err := CanonicalValue(v)
	if err != nil {
		return [32]byte{}, err
	}
	return sha256.Sum256(b), nil
}

func normalize(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[k] = normalize(x)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = normalize(x)
		}
		return out
	case json.Number:
		return json.Number(canonicalNumber(string(v)))
	case float64:
		return json.Number(canonicalNumber(strconv.FormatFloat(v, 'g', -1, 64)))
	}
	return v
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
