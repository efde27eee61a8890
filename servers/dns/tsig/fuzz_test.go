package tsig_test

import (
	"strings"
	"testing"

	"github.com/bulwarkmcp/bulwark/servers/dns/tsig"
)

// FuzzParse: any text is either refused with ErrKeyFile or gives keys
// whose names are canonical and whose algorithms are the two allowed; no
// error ever holds a secret the text gave.
func FuzzParse(f *testing.F) {
	for _, text := range forms {
		f.Add(text)
	}
	f.Fuzz(func(t *testing.T, text string) {
		r, err := tsig.Parse(text)
		if err != nil {
			if strings.Contains(err.Error(), secret256) || strings.Contains(err.Error(), secret512) {
				t.Fatalf("error shows a secret: %v", err)
			}
			return
		}
		for _, k := range r.Keys() {
			if !strings.HasSuffix(k.Name(), ".") || strings.ToLower(k.Name()) != k.Name() {
				t.Fatalf("name %q", k.Name())
			}
			if a := k.Algorithm(); a != tsig.HMACSHA256 && a != tsig.HMACSHA512 {
				t.Fatalf("algorithm %q", a)
			}
		}
	})
}
