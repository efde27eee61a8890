package kernel

import (
	"net/http"
	"strings"
	"testing"
)

// FuzzBYOKHeader feeds arbitrary header values to the BYOK reader. A value
// it returns is the trimmed input and 1 to 8192 printable ASCII bytes
// without spaces; "" only for a blank input; an error never quotes the
// value.
func FuzzBYOKHeader(f *testing.F) {
	for _, seed := range []string{"per-request-token", "  padded ", "two words", "tab\there", "tökén", "", "a\r\nX-Admin: 1", strings.Repeat("k", 8193)} {
		f.Add(seed, false)
	}
	f.Add("tok", true)
	f.Fuzz(func(t *testing.T, value string, twice bool) {
		h := http.Header{"X-Key": {value}}
		if twice {
			h.Add("X-Key", value)
		}
		v, err := fromHeader(h, "X-Key")
		trimmed := strings.TrimSpace(value)
		switch {
		case err != nil:
			if v != "" || (len(trimmed) >= 4 && strings.Contains(err.Error(), trimmed)) {
				t.Fatalf("error %q with value %q", err, v)
			}
		case v == "":
			if trimmed != "" || twice {
				t.Fatalf("%q (twice=%v) read as absent", value, twice)
			}
		case twice || v != trimmed || !validCredential(v) || len(v) > maxCredentialBytes:
			t.Fatalf("%q (twice=%v) accepted as %q", value, twice, v)
		}
		for i := range len(v) {
			if v[i] <= ' ' || v[i] > '~' {
				t.Fatalf("accepted byte %#x", v[i])
			}
		}
	})
}
