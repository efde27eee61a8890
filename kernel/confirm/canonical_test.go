package confirm

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"testing"
)

// canonicalByReflection is the encoder CanonicalValue replaced: normalize,
// then encoding/json. CanonicalValue must give its bytes, and fail where it
// failed.
func canonicalByReflection(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(normalizeForTest(v)); err != nil {
		return nil, errNotCanonical
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

func normalizeForTest(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[k] = normalizeForTest(x)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = normalizeForTest(x)
		}
		return out
	case json.Number:
		return json.Number(canonicalNumber(string(v)))
	case float64:
		return json.Number(canonicalNumber(strconv.FormatFloat(v, 'g', -1, 64)))
	}
	return v
}

func sameCanonical(t *testing.T, v any) {
	t.Helper()
	want, wantErr := canonicalByReflection(v)
	got, err := CanonicalValue(v)
	if (err != nil) != (wantErr != nil) || !bytes.Equal(got, want) {
		t.Fatalf("CanonicalValue(%#v) = %q, %v; by reflection %q, %v", v, got, err, want, wantErr)
	}
	if got, err := AppendCanonical([]byte("prefix"), v); (err != nil) != (wantErr != nil) || !bytes.Equal(got, append([]byte("prefix"), want...)) {
		t.Fatalf("AppendCanonical(prefix, %#v) = %q, %v; want prefix%q, %v", v, got, err, want, wantErr)
	}
}

type canonStruct struct {
	A int            `json:"a"`
	M map[string]any `json:"m,omitempty"`
	H string         `json:"h"`
}

// TestCanonicalValueTypes: every kind of value, decoded or not, encodes as
// the reflection-based encoder encoded it, errors included.
func TestCanonicalValueTypes(t *testing.T) {
	for _, v := range []any{
		nil, true, false, "", "<a & b>\u2028\xff\x00\"\\", 0.0, math.Copysign(0, -1), 1.5, 1e21, 1e-7, 123456789012345678.0,
		math.NaN(), math.Inf(1), math.Inf(-1),
		json.Number(""), json.Number("1.500"), json.Number("-0"), json.Number("1e400"), json.Number("abc"), json.Number("01"), json.Number(" 1"), json.Number("1E+2"),
		map[string]any(nil), []any(nil), map[string]any{}, []any{},
		map[string]any{"b": 1.0, "a": []any{json.Number("2.0"), nil, map[string]any{"z": "<", "": true}}, "\u00e9": "x", "A": "y"},
		map[string]any{"nan": math.NaN()},
		[]any{1, int64(-3), uint8(7), "s", map[string]string{"k": "<v>"}, canonStruct{A: 1, M: map[string]any{"n": 1.50}, H: "&"}},
		map[string]any{"raw": json.RawMessage(` {"b" : 1, "a":"<"} `), "ch": make(chan int)},
		map[string]int{"b": 2, "a": 1}, 42, []string{"x"}, &canonStruct{}, json.RawMessage(`[1, 2]`),
	} {
		sameCanonical(t, v)
	}
}

// FuzzCanonicalValue: any JSON document, decoded with and without
// UseNumber, encodes as the reflection-based encoder encoded it.
func FuzzCanonicalValue(f *testing.F) {
	f.Add([]byte(`{"b":[1,2.50,"x"],"a":{"z":null,"y":true}}`))
	f.Add([]byte(`[1e400, -0.0, 12345678901234567890, 1e21, 1E-7, 0.1]`))
	f.Add([]byte(`"\u00e9\ud83d\ude00<&>\u2028\u0000"`))
	f.Add([]byte(`{"zone":"example.com","name":"www","Zone":"x","":{}}`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		var v any
		if json.Unmarshal(doc, &v) == nil {
			sameCanonical(t, v)
		}
		dec := json.NewDecoder(bytes.NewReader(doc))
		dec.UseNumber()
		var n any
		if dec.Decode(&n) == nil {
			sameCanonical(t, n)
		}
	})
}
