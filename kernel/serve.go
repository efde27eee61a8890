package kernel

import (
	"bytes"
	"context"
	"errors"
	"io"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/kernel/httpguard"
)

// maxStdioLine bounds one JSON-RPC message over stdio, like the HTTP body
// limit.
const maxStdioLine = 3 << 20

// ServeStdio serves the MCP protocol over in and out (the process's stdin
// and stdout) until ctx ends or the client closes its side. The principal is
// "local". When the client closes its side, the requests it already sent
// are answered first (`echo '{…}' | bulwark dns` gets its reply).
func (s *Server) ServeStdio(ctx context.Context, in io.ReadCloser, out io.WriteCloser) error {
	d := newDrain(ctx)
	err := s.mcp.Run(ctx, &mcp.IOTransport{
		Reader:        &drainReader{ReadCloser: in, d: d},
		Writer:        &drainWriter{WriteCloser: out, d: d},
		MaxLineLength: maxStdioLine,
	})
	if errors.Is(err, context.Canceled) || errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// drain counts the requests read and the responses written, so that the
// end of input can wait for the answers it is owed.
type drain struct {
	ctx     context.Context
	mu      sync.Mutex
	owed    int
	changed chan struct{}
}

func newDrain(ctx context.Context) *drain { return &drain{ctx: ctx, changed: make(chan struct{})} }

func (d *drain) add(n int) {
	if n == 0 {
		return
	}
	d.mu.Lock()
	d.owed += n
	close(d.changed)
	d.changed = make(chan struct{})
	d.mu.Unlock()
}

// drainLimit bounds how long the end of input waits for owed answers, as
// the HTTP write timeout bounds a call.
const drainLimit = 5 * time.Minute

// wait blocks until nothing is owed, the context ends, or drainLimit passes.
func (d *drain) wait() {
	limit := time.NewTimer(drainLimit)
	defer limit.Stop()
	for {
		d.mu.Lock()
		owed, changed := d.owed, d.changed
		d.mu.Unlock()
		if owed <= 0 {
			return
		}
		select {
		case <-changed:
		case <-d.ctx.Done():
			return
		case <-limit.C:
			return
		}
	}
}

// lines counts the complete JSON-RPC messages in p (one per line, as the
// stdio transport frames them) for which count says yes; partial keeps an
// unfinished line between calls.
func lines(partial *[]byte, p []byte, count func(httpguard.Message) bool) int {
	n := 0
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			if len(*partial)+len(p) <= maxStdioLine {
				*partial = append(*partial, p...)
			}
			return n
		}
		line := p[:i]
		if len(*partial) > 0 {
			line = append(*partial, line...)
			*partial = (*partial)[:0]
		}
		if env, err := httpguard.ParseMessage(line); err == nil && count(env) {
			n++
		}
		p = p[i+1:]
	}
	return n
}

type drainReader struct {
	io.ReadCloser
	d       *drain
	partial []byte
}

func (r *drainReader) Read(p []byte) (int, error) {
	n, err := r.ReadCloser.Read(p)
	r.d.add(lines(&r.partial, p[:n], func(e httpguard.Message) bool { return e.Method != "" && e.ID != nil }))
	if errors.Is(err, io.EOF) {
		r.d.wait()
	}
	return n, err
}

type drainWriter struct {
	io.WriteCloser
	d       *drain
	partial []byte
}

func (w *drainWriter) Write(p []byte) (int, error) {
	n, err := w.WriteCloser.Write(p)
	w.d.add(-lines(&w.partial, p[:n], func(e httpguard.Message) bool { return e.Response }))
	return n, err
}
