package taint

import (
	"math/rand/v2"
	"regexp"
	"slices"
	"testing"
)

// b64Runs finds what the regular expression it replaces finds, on random
// strings of base64 characters and others.
func TestB64RunsIsTheRegexp(t *testing.T) {
	re := regexp.MustCompile(`[A-Za-z0-9+/_=-]{16,}`)
	const chars = "Aa0+/_=- .\u200b%é\n"
	r := rand.New(rand.NewPCG(1, 2))
	for range 5000 {
		b := make([]rune, r.IntN(80))
		for i := range b {
			c := []rune(chars)[r.IntN(len([]rune(chars)))]
			if r.IntN(4) > 0 { // mostly base64, so that long runs occur
				c = []rune(chars)[r.IntN(8)]
			}
			b[i] = c
		}
		s := string(b)
		if got, want := b64Runs(s), re.FindAllString(s, -1); !slices.Equal(got, want) {
			t.Fatalf("%q: %q, want %q", s, got, want)
		}
	}
}
