package upstream

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

// endless yields 'x' forever, and records what its reader asked of it:
// the bytes it handed out, and each buffer it was given to fill (a buffer
// is known by the last byte of its backing array, which every slice of it
// io.ReadFull passes shares), with its size.
type endless struct {
	read    int64
	buffers map[*byte]int
}

func (e *endless) Read(p []byte) (int, error) {
	if len(p) > 0 {
		whole := p[:cap(p)]
		end := &whole[len(whole)-1]
		e.buffers[end] = max(e.buffers[end], cap(p))
	}
	for i := range p {
		p[i] = 'x'
	}
	e.read += int64(len(p))
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
	const limit = 3 << 20
	e := &endless{buffers: map[*byte]int{}}
	got, over, err := readCapped(io.MultiReader(strings.NewReader("ab"), e), limit, false)
	if got != nil || !over || err != nil {
		t.Fatalf("endless: %d %v %v", len(got), over, err)
	}
	if read := 2 + e.read; read != limit+1 {
		t.Fatalf("read %d bytes of an endless body, want the cap and one more (%d)", read, limit+1)
	}
	buffered := 0
	for _, n := range e.buffers {
		buffered += n
	}
	// the first buffer's first two bytes came from the other reader: it is
	// known by its end, as the endless reader saw it from its third byte
	if buffered > limit+1 || len(e.buffers) != (limit+1+readChunk-1)/readChunk {
		t.Fatalf("%d bytes buffered in %d chunks for a refused endless body, want at most %d in %d",
			buffered, len(e.buffers), limit+1, (limit+1+readChunk-1)/readChunk)
	}
}
