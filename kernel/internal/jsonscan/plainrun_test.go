package jsonscan

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestPlainRun: plainRun stops at the first byte the tables do not copy,
// at every position of strings of every length around its 8-byte steps.
func TestPlainRun(t *testing.T) {
	for _, html := range []bool{false, true} {
		plain := &plainASCII
		if html {
			plain = &plainHTMLASCII
		}
		for n := range 40 {
			for i := range n + 1 {
				for c := range 256 {
					s := []byte(strings.Repeat("a", n))
					if i < n {
						s[i] = byte(c)
					}
					want := n
					if i < n && (c >= 0x80 || !plain[c]) {
						want = i
					}
					if got := plainRun(string(s), html); got != want {
						t.Fatalf("html=%v len %d, %#x at %d: %d, want %d", html, n, c, i, got, want)
					}
				}
			}
		}
	}
}

// TestAppendStringRuns: with plainRun skipping the plain runs, a string
// with any byte at any position around the 8-byte steps (and a 3-byte
// rune after it) encodes as encoding/json encodes it.
func TestAppendStringRuns(t *testing.T) {
	for n := 1; n <= 20; n++ {
		for i := range n {
			for c := range 256 {
				s := []byte(strings.Repeat("a", n) + "\u2028b")
				s[i] = byte(c)
				for _, html := range []bool{true, false} {
					var buf bytes.Buffer
					enc := json.NewEncoder(&buf)
					enc.SetEscapeHTML(html)
					_ = enc.Encode(string(s))
					want := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
					if got := AppendString(nil, string(s), html); !bytes.Equal(got, want) {
						t.Fatalf("%q html=%v: got %s, want %s", s, html, got, want)
					}
				}
			}
		}
	}
}
