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

// maxOwed bounds the requests read over stdio and not yet answered: past
// it the server stops reading until answers go out, so a client that
// floods requests, or stops reading its answers, holds at most this many
// handlers (each blocked on the write, never queued in memory).
const maxOwed = 256

// StdioOptions configure ServeStdioWith. The zero value serves with the
// fast path on.
type StdioOptions struct {
	// DisableFastPath sends every message through the go-sdk's session.
	// By default, once the go-sdk's session is initialized, the kernel
	// answers tools/call, tools/list and ping itself, with the same answers
	// (fastpath_stdio.go; the rules: docs/architecture.md).
	DisableFastPath bool
}

// ServeStdio serves the MCP protocol over in and out (the process's stdin
// and stdout) until ctx ends or the client closes its side. The principal is
// "local". When the client closes its side, the requests it already sent
// are answered first (`echo '{…}' | bulwark dns` gets its reply).
func (s *Server) ServeStdio(ctx context.Context, in io.ReadCloser, out io.WriteCloser) error {
	return s.ServeStdioWith(ctx, in, out, StdioOptions{})
}

// ServeStdioWith is ServeStdio with options.
func (s *Server) ServeStdioWith(ctx context.Context, in io.ReadCloser, out io.WriteCloser, opts StdioOptions) error {
	var err error
	if opts.DisableFastPath {
		err = s.serveStdioSDK(ctx, in, out)
	} else {
		err = s.serveStdioFast(ctx, in, out)
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// serveStdioSDK hands the whole stream to the go-sdk's session.
func (s *Server) serveStdioSDK(ctx context.Context, in io.ReadCloser, out io.WriteCloser) error {
	d := newDrain(ctx)
	err := s.mcp.Run(ctx, &mcp.IOTransport{
		Reader:        &drainReader{ReadCloser: in, d: d},
		Writer:        &sdkOut{out: &stdioOut{w: out, s: s, ctx: ctx, d: d}},
		MaxLineLength: maxStdioLine,
	})
	_ = out.Close()
	return err
}

// drain keeps the ids of the requests read and not yet answered, so that
// the end of input can wait for the answers it is owed and reading can
// stop while maxOwed are outstanding.
type drain struct {
	ctx     context.Context
	mu      sync.Mutex
	owed    map[string]bool // by id as the go-sdk writes it back (wireID)
	changed chan struct{}   // closed and replaced on a change while waiting > 0
	waiting int             // goroutines in until
}

func newDrain(ctx context.Context) *drain {
	return &drain{ctx: ctx, owed: map[string]bool{}, changed: make(chan struct{})}
}

// request records a request read; a request whose id is already owed adds
// nothing (the go-sdk answers it with no id, or not at all).
func (d *drain) request(id string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.owed[id] {
		d.owed[id] = true
		d.signal()
	}
}

// answered records the answer to the request id.
func (d *drain) answered(id string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.owed[id] {
		delete(d.owed, id)
		d.signal()
	}
}

func (d *drain) owes(id string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.owed[id]
}

// signal wakes the goroutines waiting in until; with none waiting (every
// call but at the end of input or at maxOwed) it costs nothing.
func (d *drain) signal() {
	if d.waiting == 0 {
		return
	}
	close(d.changed)
	d.changed = make(chan struct{})
}

// drainLimit bounds how long the end of input waits for owed answers, as
// the HTTP write timeout bounds a call.
const drainLimit = 5 * time.Minute

// wait blocks until nothing is owed, the context ends, or drainLimit passes.
func (d *drain) wait() { d.until(0, drainLimit) }

// room blocks while maxOwed requests are owed (or until the context ends).
func (d *drain) room() { d.until(maxOwed-1, 0) }

// until blocks until at most n requests are owed, the context ends, or
// limit (when not 0) passes.
func (d *drain) until(n int, limit time.Duration) {
	var timeout <-chan time.Time
	if limit > 0 {
		t := time.NewTimer(limit)
		defer t.Stop()
		timeout = t.C
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for len(d.owed) > n {
		changed := d.changed
		d.waiting++ // from here on, a change closes changed
		d.mu.Unlock()
		var done bool
		select {
		case <-changed:
		case <-d.ctx.Done():
			done = true
		case <-timeout:
			done = true
		}
		d.mu.Lock()
		d.waiting--
		if done {
			return
		}
	}
}

// lineSplitter calls each for every complete JSON-RPC message (one per
// line, as the stdio transport frames them) that httpguard parses. It keeps
// an unfinished line between calls, up to maxStdioLine: the rest of a
// longer line is skipped (the go-sdk refuses it anyway).
type lineSplitter struct {
	partial []byte
	over    bool // the current line passed maxStdioLine
}

func (l *lineSplitter) lines(p []byte, each func(httpguard.Message)) {
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			if l.over || len(l.partial)+len(p) > maxStdioLine {
				l.over, l.partial = true, l.partial[:0]
			} else {
				l.partial = append(l.partial, p...)
			}
			return
		}
		line := p[:i]
		if len(l.partial) > 0 {
			line = append(l.partial, line...)
			l.partial = l.partial[:0]
		}
		if !l.over {
			if env, err := httpguard.ParseMessage(line); err == nil {
				each(env)
			}
		}
		l.over = false
		p = p[i+1:]
	}
}

// idKey is a message's id as the go-sdk writes it back, the key of the
// drain; ok is false for a message without one (or one the go-sdk's
// decoder refuses).
func idKey(env httpguard.Message) (string, bool) {
	if env.ID == nil {
		return "", false
	}
	id, ok := wireID(env.ID)
	return string(id), ok
}

// drainReader counts the requests the go-sdk reads, and stops reading
// while maxOwed are owed.
type drainReader struct {
	io.ReadCloser
	d     *drain
	split lineSplitter
}

func (r *drainReader) Read(p []byte) (int, error) {
	r.d.room()
	n, err := r.ReadCloser.Read(p)
	r.split.lines(p[:n], func(e httpguard.Message) {
		if key, ok := idKey(e); ok && e.Method != "" {
			r.d.request(key)
		}
	})
	if errors.Is(err, io.EOF) {
		r.d.wait()
	}
	return n, err
}

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
