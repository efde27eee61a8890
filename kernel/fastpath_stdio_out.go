package kernel

import (
	"context"
	"io"
	"sync"

	"github.com/bulwarkmcp/bulwark/kernel/httpguard"
)

// stdioOut is the one writer of a stdio session's output: the go-sdk's
// messages (through sdkOut) and the fast path's lines are written whole,
// one at a time, under its lock. Nothing is queued: a client that stops
// reading blocks the writer, and with it every call that has something to
// write, and (through the drain's maxOwed) the reading of more requests.
type stdioOut struct {
	mu     sync.Mutex
	w      io.Writer
	s      *Server         // its egress gate sees every line
	ctx    context.Context // the session's
	d      *drain
	err    error // the first write error: every later write fails with it
	closed bool  // the session ended: the fast path writes nothing more
}

// write writes one line (or the go-sdk's message), under the lock.
func (o *stdioOut) write(p []byte) error {
	if o.err != nil {
		return o.err
	}
	p = o.s.gateLines(o.ctx, p, o.s.sessions) // pipeline step 18 (egress.go)
	_, o.err = o.w.Write(p)
	return o.err
}

// answer writes a fast-path response line (ending in a newline) to the
// request keyed id. Once the session ends, or ctx (the session's) does,
// nothing is written, as the go-sdk writes no response after its
// connection closes.
func (o *stdioOut) answer(ctx context.Context, id string, line []byte) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.d.answered(id) // before the write: the client may reuse the id once it reads the answer
	if o.closed || ctx.Err() != nil {
		return
	}
	_ = o.write(line)
}

// notify writes a fast-path notification line (msg without its newline)
// of the call whose context is ctx: none once the call is cancelled, as the
// go-sdk refuses to write on a cancelled context.
func (o *stdioOut) notify(ctx context.Context, msg []byte) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed || ctx.Err() != nil {
		return
	}
	_ = o.write(append(msg, '\n'))
}

func (o *stdioOut) close() {
	o.mu.Lock()
	o.closed = true
	o.mu.Unlock()
}

// sdkOut is the go-sdk's writer: it writes through stdioOut, and reads
// each message the go-sdk writes for the drain (a response answers its
// request). The go-sdk writes one whole message per
// Write. Close is stdioOut's owner's to do.
type sdkOut struct {
	out   *stdioOut
	split lineSplitter
}

func (w *sdkOut) Write(p []byte) (int, error) {
	o := w.out
	o.mu.Lock()
	defer o.mu.Unlock()
	w.split.lines(p, func(env httpguard.Message) {
		if key, ok := idKey(env); ok && env.Response {
			o.d.answered(key)
		}
	})
	if err := o.write(p); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Close leaves the output open: ServeStdio closes it once, at the end.
func (w *sdkOut) Close() error { return nil }

// stdioStream is where a stdio fast-path call's notifications go: one
// line each, in order, before its response.
type stdioStream struct {
	out *stdioOut
	ctx context.Context // the call's
}

func (ss stdioStream) message(msg []byte, _ bool) { ss.out.notify(ss.ctx, msg) }
