package errorid

import (
	"regexp"
	"testing"
)

func TestNew(t *testing.T) {
	format := regexp.MustCompile(`^` + Pattern + `$`)
	seen := map[string]bool{}
	for range 1000 {
		id := New()
		if !format.MatchString(id) || seen[id] {
			t.Fatalf("id %q: malformed or repeated", id)
		}
		seen[id] = true
	}
}
