package kernel

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// FuzzScrub checks the scrubber's promise on any text and credential: no
// whole credential survives, and no prefix of minCutPrefix or more bytes
// stands right before a cut marker. Credentials that overlap the marker
// "[redacted]" itself are skipped: the replacement could spell them again.
func FuzzScrub(f *testing.F) {
	f.Add("your token is hzSECRET-0123 and …", "hzSECRET-0123")
	f.Add("xxxxhzSEC…[truncated: 20 characters in all]", "hzSECRET-0123")
	f.Add(`{"a":"tok\"en"}`, `tok"en`)
	f.Add("line\n[truncated: 1 of 2 characters shown]", "line")
	f.Fuzz(func(t *testing.T, text, secret string) {
		if secret == "" || overlapsMarker(secret) {
			return
		}
		sc := newScrubber(secret)
		out, _ := sc.bytes([]byte(text))
		for _, form := range sc.forms {
			if bytes.Contains(out, form) {
				t.Fatalf("%q survives in %q", form, out)
			}
			for _, m := range cutMarkers {
				for i := bytes.Index(out, m); i >= 0; {
					for k := minCutPrefix; k < len(form); k++ {
						if bytes.HasSuffix(out[:i], form[:k]) {
							t.Fatalf("prefix %q before a cut in %q", form[:k], out)
						}
					}
					j := bytes.Index(out[i+1:], m)
					if j < 0 {
						break
					}
					i += 1 + j
				}
			}
		}
	})
}

func overlapsMarker(s string) bool {
	const m = "[redacted]"
	if strings.Contains(m, s) || strings.Contains(s, m) {
		return true
	}
	for k := 1; k < len(s) && k < len(m); k++ {
		if strings.HasSuffix(m, s[:k]) || strings.HasPrefix(m, s[len(s)-k:]) {
			return true
		}
	}
	return false
}

// Budget: text made only of cut markers and credential prefixes (the
// worst case for the prefix check) is scrubbed in linear time; the bound
// is generous, a quadratic scan would take minutes.
func TestScrubBudget(t *testing.T) {
	secret := strings.Repeat("a", 63) + "b"
	sc := newScrubber(secret)
	text := []byte(strings.Repeat(strings.Repeat("a", 10)+"…", 200_000/13))
	start := time.Now()
	out, n := sc.bytes(text)
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("took %v", d)
	}
	if n == 0 || bytes.Contains(out, []byte("aaaaa…")) {
		t.Fatalf("%d replacements", n)
	}
}
