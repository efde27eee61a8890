package jsonscan

import (
	"bytes"
	"testing"
)

// FuzzKeySet: a KeySet answers as a map of the keys added since the last
// Reset, across its inline array, its list and its map (over smallSet keys).
func FuzzKeySet(f *testing.F) {
	f.Add([]byte("a,b,a,,c,\x00reset,b,b"))
	f.Add(bytes.Repeat([]byte("k,"), 40))
	f.Add([]byte("1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,1,\x00reset,18,1,18"))
	f.Fuzz(func(t *testing.T, ops []byte) {
		var k KeySet
		model := map[string]bool{}
		for _, op := range bytes.Split(ops, []byte(",")) {
			if string(op) == "\x00reset" {
				k.Reset()
				clear(model)
				continue
			}
			key := bytes.Clone(op)
			if got, want := k.Add(key), !model[string(op)]; got != want {
				t.Fatalf("Add(%q) = %v, want %v", op, got, want)
			}
			model[string(op)] = true
		}
	})
}
