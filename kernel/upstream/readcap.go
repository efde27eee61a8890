package upstream

import (
	"errors"
	"io"
)

// readChunk is the unit readCapped reads in.
const readChunk = 64 << 10

// readCapped reads r until EOF or until more than limit bytes arrived, and
// reports the overflow. It allocates about the bytes it read plus one copy
// of the result — never the repeated regrowth of io.ReadAll, which allocates
// several times a large body's size before the cap is even reached. On
// overflow it returns the first limit bytes when keep is set, else nothing
// (a body that is refused is never copied).
func readCapped(r io.Reader, limit int64, keep bool) ([]byte, bool, error) {
	var chunks [][]byte
	var total int64
	for total <= limit {
		size := min(int64(readChunk), limit+1-total)
		buf := make([]byte, size)
		n, err := io.ReadFull(r, buf)
		if n > 0 {
			chunks = append(chunks, buf[:n])
			total += int64(n)
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			break
		}
		if err != nil {
			return join(chunks, min(total, limit)), total > limit, err
		}
	}
	if total > limit && !keep {
		return nil, true, nil
	}
	return join(chunks, min(total, limit)), total > limit, nil
}

// join concatenates the chunks, keeping the first n bytes.
func join(chunks [][]byte, n int64) []byte {
	if len(chunks) == 1 {
		return chunks[0][:n]
	}
	out := make([]byte, 0, n)
	for _, c := range chunks {
		out = append(out, c[:min(int64(len(c)), n-int64(len(out)))]...)
	}
	return out
}
