package kernel

import (
	"net/http"
	"strings"
	"testing"
)

// FuzzBYOKHeader feeds arbitrary header values to the BYOK reader. A value
// it returns is the trimmed input and 1 to 8192 printable ASCII bytes with
// at most one inner space (scheme and token); "" only for a blank input; an error never quotes the
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
			if (v[i] < ' ' || v[i] > '~') || (v[i] == ' ' && (i == 0 || i == len(v)-1)) {
				t.Fatalf("accepted byte %#x at %d", v[i], i)
			}
		}
		if strings.Count(v, " ") > 1 {
			t.Fatalf("accepted %d spaces", strings.Count(v, " "))
		}
	})
}

// TestCredentialShape: one token, or a scheme, one space and a token (the
// VDB relays "ApiKey org:key"); nothing else that holds a blank.
func TestCredentialShape(t *testing.T) {
	for v, want := range map[string]bool{
		"tok": true, "ApiKey org:key": true, "Bearer a.b.c": true,
		"": false, " tok": false, "tok ": false, "a  b": false, "a b c": false,
		"a\tb": false, "a\r\nb": false, "tök": false, strings.Repeat("k", 8193): false,
	} {
		if got := validCredential(v); got != want {
			t.Errorf("validCredential(%q) = %v, want %v", v, got, want)
		}
	}
}
