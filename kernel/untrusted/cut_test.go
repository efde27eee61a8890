package untrusted_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/bulwarkmcp/bulwark/kernel/untrusted"
)

func TestCutIndex(t *testing.T) {
	for _, c := range []struct {
		s    string
		n    int
		want int
	}{
		{"", 0, 0}, {"abc", 5, 3}, {"abc", 3, 3}, {"abc", 2, 2}, {"abc", -1, 0},
		{"aé", 2, 1},           // é is 2 bytes: not split
		{"a\U0001F600b", 4, 1}, // a 4-byte emoji: cut before it
		{"a\U0001F600b", 5, 5},
	} {
		if got := untrusted.CutIndex(c.s, c.n); got != c.want {
			t.Errorf("CutIndex(%q, %d) = %d, want %d", c.s, c.n, got, c.want)
		}
		if got := untrusted.CutIndex([]byte(c.s), c.n); got != c.want {
			t.Errorf("CutIndex([]byte(%q), %d) = %d, want %d", c.s, c.n, got, c.want)
		}
	}
}

func FuzzCutIndex(f *testing.F) {
	f.Add("héllo wörld \U0001F600", 7)
	f.Add(strings.Repeat("é", 10), 5)
	f.Fuzz(func(t *testing.T, s string, n int) {
		i := untrusted.CutIndex(s, n)
		if i < 0 || i > len(s) || (n >= 0 && i > n) {
			t.Fatalf("CutIndex(%q, %d) = %d: out of range", s, n, i)
		}
		if utf8.ValidString(s) && !utf8.ValidString(s[:i]) {
			t.Fatalf("CutIndex(%q, %d) = %d splits a character", s, n, i)
		}
		if utf8.ValidString(s) && n >= 0 && n < len(s) && i < n-utf8.UTFMax+1 {
			t.Fatalf("CutIndex(%q, %d) = %d cuts more than a character", s, n, i)
		}
	})
}
