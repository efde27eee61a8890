package upstream

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

// endless yields 'x' forever.
type endless struct{}

func (endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	return len(p), nil
}

// TestReadCapped: bodies under, at and over the cap, kept or refused; an
// endless body stops right after the cap and, refused, is never copied.
func TestReadCapped(t *testing.T) {
	for _, tc := range []struct {
		n     int
		limit int64
		keep  bool
		want  int
		over  bool
	}{
		{0, 10, false, 0, false},
		{10, 10, false, 10, false},
		{11, 10, false, 0, true},
		{11, 10, true, 10, true},
		{200 << 10, 300 << 10, false, 200 << 10, false},
		{300<<10 + 1, 300 << 10, false, 0, true},
		{300<<10 + 1, 300 << 10, true, 300 << 10, true},
	} {
		src := bytes.Repeat([]byte("a"), tc.n)
		got, over, err := readCapped(bytes.NewReader(src), tc.limit, tc.keep)
		if err != nil || over != tc.over || len(got) != tc.want || !bytes.Equal(got, src[:len(got)]) {
			t.Errorf("n=%d limit=%d keep=%v: len %d over %v err %v", tc.n, tc.limit, tc.keep, len(got), over, err)
		}
	}
	r := io.MultiReader(strings.NewReader("ab"), endless{})
	allocs := testing.AllocsPerRun(3, func() {
		got, over, err := readCapped(r, 3<<20, false)
		if got != nil || !over || err != nil {
			t.Fatalf("endless: %d %v %v", len(got), over, err)
		}
	})
	if allocs > 3<<20/readChunk+8 {
		t.Fatalf("%v allocations for a refused endless body", allocs)
	}
}
