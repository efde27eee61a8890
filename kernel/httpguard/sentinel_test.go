package httpguard

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestDecodeHeaderValue(t *testing.T) {
	tests := []struct {
		name, in, want string
		ok             bool
	}{
		{"plain", "list_zones", "list_zones", true},
		{"plain uri", "file:///etc/x?y=z", "file:///etc/x?y=z", true},
		{"empty", "", "", true},
		{"sentinel ascii", "=?base64?bGlzdF96b25lcw==?=", "list_zones", true},
		{"sentinel utf-8", "=?base64?Y2Fmw6k=?=", "café", true},
		{"sentinel leading space", "=?base64?IGxlYWQ=?=", " lead", true},
		{"sentinel of a sentinel-looking value", "=?base64?PT9iYXNlNjQ/eD89?=", "=?base64?x?=", true},
		{"empty sentinel", "=?base64??=", "", true},
		{"uppercase marker is plain", "=?BASE64?eA==?=", "=?BASE64?eA==?=", true},
		{"prefix only is plain-looking but ambiguous", "=?base64?=", "", false},
		{"bad base64", "=?base64?!!!?=", "", false},
		{"missing padding", "=?base64?eA?=", "", false},
		{"url alphabet", "=?base64?-_8=?=", "", false},
		{"non-canonical bits", "=?base64?eB==?=", "", false},
		{"newline inside", "=?base64?eA=\n=?=", "", false},
		{"invalid UTF-8 payload", "=?base64?/w==?=", "", false},
		{"plain non-ASCII", "café", "", false},
		{"plain control char", "a\tb", "", false},
		{"plain leading space", " a", "", false},
		{"plain trailing tab", "a\t", "", false},
		{"plain looks like sentinel but bad", "=?base64?not base64?=", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := decodeHeaderValue(tt.in)
			if (err == nil) != tt.ok || got != tt.want || err != nil && !errors.Is(err, errInvalidHeaderValue) {
				t.Fatalf("DecodeHeaderValue(%q) = %q, %v; want %q ok=%v", tt.in, got, err, tt.want, tt.ok)
			}
		})
	}
}

func TestEncodeHeaderValue(t *testing.T) {
	tests := []struct{ in, want string }{
		{"list_zones", "list_zones"},
		{"", ""},
		{"café", "=?base64?Y2Fmw6k=?="},
		{" lead", "=?base64?IGxlYWQ=?="},
		{"=?base64?x?=", "=?base64?PT9iYXNlNjQ/eD89?="},
		{"a\r\nX-Injected: 1", "=?base64?YQ0KWC1JbmplY3RlZDogMQ==?="},
	}
	for _, tt := range tests {
		if got := EncodeHeaderValue(tt.in); got != tt.want {
			t.Errorf("EncodeHeaderValue(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func FuzzHeaderValue(f *testing.F) {
	for _, s := range []string{"list_zones", "café", "=?base64?Y2Fmw6k=?=", "=?base64??=", " x", "=?base64?x?=", "\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		// Every UTF-8 value survives encode then decode.
		if utf8.ValidString(s) {
			enc := EncodeHeaderValue(s)
			dec, err := decodeHeaderValue(enc)
			if err != nil || dec != s {
				t.Fatalf("round trip %q -> %q -> %q, %v", s, enc, dec, err)
			}
			if strings.ContainsAny(enc, "\r\n\x00") {
				t.Fatalf("encoded form %q carries a control character", enc)
			}
		}
		// Whatever decodes re-encodes to an equivalent value.
		dec, err := decodeHeaderValue(s)
		if err != nil {
			return
		}
		if again, err := decodeHeaderValue(EncodeHeaderValue(dec)); err != nil || again != dec {
			t.Fatalf("decoded %q of %q does not round-trip: %q %v", dec, s, again, err)
		}
	})
}
