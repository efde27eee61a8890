package jsonscan

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// oldDecode is what DecodeObject replaces: CheckUnique, then
// encoding/json's Unmarshal into a map.
func oldDecode(data []byte) (map[string]any, error) {
	if err := CheckUnique(data); err != nil {
		return nil, err
	}
	m := map[string]any{}
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, ErrNotObject
	}
	return m, nil
}

func sameDecode(t *testing.T, data []byte) {
	t.Helper()
	want, werr := oldDecode(data)
	got, gerr := DecodeObject(data)
	var wd, gd *DuplicateKeyError
	switch {
	case (werr == nil) != (gerr == nil):
		t.Fatalf("%q: error %v, want %v", data, gerr, werr)
	case werr != nil && errors.As(werr, &wd) != errors.As(gerr, &gd):
		t.Fatalf("%q: error %v, want %v", data, gerr, werr)
	case wd != nil && wd.Key != gd.Key:
		t.Fatalf("%q: duplicate %q, want %q", data, gd.Key, wd.Key)
	case werr != nil && errors.Is(werr, ErrNotObject) != errors.Is(gerr, ErrNotObject):
		t.Fatalf("%q: error %v, want %v", data, gerr, werr)
	case werr == nil && !reflect.DeepEqual(got, want):
		t.Fatalf("%q: %#v, want %#v", data, got, want)
	}
}

var objectSeeds = []string{
	`{}`, ` {"zone":"example.com","name":"www"} `, `null`, ` null `, `[]`, `"s"`, `1`, `true`, ``, ` `,
	`{"a":1,"a":2}`, `{"a":1,"\u0061":2}`, `{"a":{"b":[1,2,{"c":null,"c":0}]}}`, `{"n":1e400,"a":1,"a":2}`,
	`{"n":1e400}`, `{"n":-0,"m":1.5e-3,"l":[],"o":{},"t":true,"f":false}`, `{"s":"\ud800x\udc00\ud83d\ude00\u00e9\n\"\\\/"}`,
	"{\"s\":\"\xff\xed\xa0\x80ok\xe2\x82\"}", "{\"\xff\":1}", `{"a":1,}`, `{"a":1}x`, `{"a" 1}`, `[1,,2]`,
	`{"a":` + strings.Repeat("[", 1001) + strings.Repeat("]", 1001) + `}`,
	`{"a":` + strings.Repeat("[", 998) + strings.Repeat("]", 998) + `}`,
}

func TestDecodeObject(t *testing.T) {
	for _, s := range objectSeeds {
		sameDecode(t, []byte(s))
	}
}

func FuzzDecodeObject(f *testing.F) {
	for _, s := range objectSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) { sameDecode(t, data) })
}

func BenchmarkDecodeObject(b *testing.B) {
	data := []byte(`{"zone":"example.com","name":"www"}`)
	b.Run("CheckUnique+Unmarshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = oldDecode(data)
		}
	})
	b.Run("DecodeObject", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = DecodeObject(data)
		}
	})
}
