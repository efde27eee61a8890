package gateway

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/kernel/pipeio"
)

// stdioTransport is the MCP transport over a spawned child's stdin and
// stdout: newline-delimited JSON-RPC read with one reused buffer. The
// go-sdk's IOTransport builds a JSON decoder and its 32 KiB buffer for
// every message, which was a tenth of a relayed call's CPU and much of its
// garbage (docs/performance.md).
//
// A line longer than maxLine is an error: the connection ends and the
// supervisor restarts the upstream; at most maxLine bytes of it are ever
// held. JSON-RPC batches (removed from MCP in 2025-06-18) are refused the
// same way.
type stdioTransport struct {
	r       io.ReadCloser // the child's stdout
	w       io.WriteCloser
	maxLine int
	conn    *stdioConn // set by Connect: the gateway's own calls go on it (rawcall.go)
	// notify, when set, handles a notification on the read loop (in order
	// with the responses to the gateway's own calls) instead of handing it
	// to the go-sdk; it reports whether it did (link.rawNote).
	notify func(*jsonrpc.Request) bool
}

func (t *stdioTransport) Connect(context.Context) (mcp.Connection, error) {
	c := &stdioConn{
		w:        t.w,
		out:      pipeio.Writer(t.w),
		r:        t.r,
		incoming: make(chan readResult),
		closed:   make(chan struct{}),
		dead:     make(chan struct{}),
		notify:   t.notify,
	}
	t.conn = c
	go c.readLoop(newLineReader(pipeio.Reader(t.r), t.maxLine))
	return c, nil
}

type readResult struct {
	msg jsonrpc.Message
	err error
}

type stdioConn struct {
	writeMu sync.Mutex
	w       io.WriteCloser // the child's stdin, closed by Close
	out     io.Writer      // w, written through kernel/pipeio
	wbuf    []byte         // guarded by writeMu
	r       io.ReadCloser

	incoming chan readResult
	closed   chan struct{}

	closeOnce sync.Once
	closeErr  error

	// The gateway's own tools/call requests (rawcall.go), in an id space
	// the go-sdk never uses (strings with rawIDPrefix; it numbers its own).
	nextID  atomic.Uint64
	pendMu  sync.Mutex
	pend    map[string]chan *jsonrpc.Response // guarded by pendMu
	readErr error                             // why the read loop ended; guarded by pendMu
	dead    chan struct{}                     // closed when the read loop ends
	meta    atomic.Pointer[[]byte]            // the go-sdk's per-request _meta members (sdkMeta)
	notify  func(*jsonrpc.Request) bool       // stdioTransport.notify
}

// readLoop decodes one message a line (decodeMessage: the go-sdk's
// decoding without its per-value buffers) and hands it to Read — or, when
// it answers one of the gateway's own calls, to that call — until an error
// (delivered to the go-sdk and to every call waiting, then the loop ends)
// or Close.
func (c *stdioConn) readLoop(lr *lineReader) {
	for {
		line, err := lr.next()
		var msg jsonrpc.Message
		if err == nil {
			if line[0] == '[' {
				err = errors.New("upstream sent a JSON-RPC batch, which this gateway does not accept")
			} else if msg, err = decodeMessage(line); err != nil {
				err = fmt.Errorf("decoding upstream message: %w", err)
			}
		}
		if err != nil {
			c.fail(err)
		} else if resp, ok := msg.(*jsonrpc.Response); ok {
			if id, ok := resp.ID.Raw().(string); ok && strings.HasPrefix(id, rawIDPrefix) {
				c.deliver(id, resp)
				continue
			}
		} else if req, ok := msg.(*jsonrpc.Request); ok && !req.IsCall() && c.notify != nil && c.notify(req) {
			continue
		}
		select {
		case c.incoming <- readResult{msg, err}:
		case <-c.closed:
			c.fail(io.EOF)
			return
		}
		if err != nil {
			return
		}
	}
}

func (c *stdioConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case r := <-c.incoming:
		return r.msg, r.err
	case <-c.closed:
		return nil, io.EOF
	}
}

func (c *stdioConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return fmt.Errorf("marshaling message: %w", err)
	}
	if req, ok := msg.(*jsonrpc.Request); ok && req.Method == "tools/list" && c.meta.Load() == nil {
		c.meta.Store(sdkMeta(req.Params))
	}
	return c.writeLine(func(b []byte) ([]byte, error) { return append(b, data...), nil })
}

// writeLine writes the message line build appends to b, and its newline,
// in one write, so a message and its newline reach the child together
// (between any two others); the buffer is reused while it stays small.
func (c *stdioConn) writeLine(build func(b []byte) ([]byte, error)) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	b, err := build(c.wbuf[:0])
	if err != nil {
		return err
	}
	c.wbuf = append(b, '\n')
	_, err = c.out.Write(c.wbuf)
	if cap(c.wbuf) > 64<<10 {
		c.wbuf = nil
	}
	return err
}

// Close closes the child's stdin and stdout (which ends the read loop);
// the supervisor kills the child and its process group (process.kill).
func (c *stdioConn) Close() error {
	c.closeOnce.Do(func() {
		c.closeErr = errors.Join(c.w.Close(), c.r.Close())
		close(c.closed)
	})
	return c.closeErr
}

func (c *stdioConn) SessionID() string { return "" }

// errLineTooLong: the upstream sent a line over the cap.
var errLineTooLong = errors.New("upstream sent a message line over the size cap")

// lineReader reads newline-delimited lines, each at most max bytes
// (without its line ending), through one reused buffer.
type lineReader struct {
	br   *bufio.Reader
	max  int
	long []byte // a line that did not fit br's buffer, reused
}

func newLineReader(r io.Reader, max int) *lineReader {
	return &lineReader{br: bufio.NewReaderSize(r, min(max+2, 64<<10)), max: max}
}

// next returns the next non-blank line without its "\n" or "\r\n", valid
// until the following call. A line over max is errLineTooLong, reported
// once max bytes of it have been seen, without reading the rest.
func (l *lineReader) next() ([]byte, error) {
	for {
		line, err := l.line()
		if err != nil {
			return nil, err
		}
		if len(bytes.TrimSpace(line)) > 0 {
			return line, nil
		}
	}
}

func (l *lineReader) line() ([]byte, error) {
	if cap(l.long) > 1<<20 { // a big line once does not pin its memory
		l.long = nil
	}
	l.long = l.long[:0]
	for {
		chunk, err := l.br.ReadSlice('\n')
		switch {
		case err == nil:
			var line []byte
			if len(l.long) == 0 {
				line = chunk
			} else {
				l.long = append(l.long, chunk...)
				line = l.long
			}
			line = bytes.TrimSuffix(line[:len(line)-1], []byte{'\r'})
			if len(line) > l.max {
				return nil, errLineTooLong
			}
			return line, nil
		case errors.Is(err, bufio.ErrBufferFull):
			if len(l.long)+len(chunk) > l.max+1 { // +1: a "\r" may still end it
				return nil, errLineTooLong
			}
			l.long = append(l.long, chunk...)
		default:
			if err == io.EOF && len(l.long)+len(chunk) > 0 {
				// A last line without its newline still counts; EOF follows.
				l.long = append(l.long, chunk...)
				line := bytes.TrimSuffix(l.long, []byte{'\r'})
				if len(line) > l.max {
					return nil, errLineTooLong
				}
				return line, nil
			}
			return nil, err
		}
	}
}

// rawIDPrefix starts the id of every request the gateway itself sends on a
// child's connection. The go-sdk's ids are numbers.
const rawIDPrefix = "bulwark-gw-"

// deliver hands a response to the call waiting for its id. A response for
// an id not in flight — one never issued, answered already, or given up —
// is dropped, as the go-sdk drops a response it did not ask for.
func (c *stdioConn) deliver(id string, resp *jsonrpc.Response) {
	c.pendMu.Lock()
	ch := c.pend[id]
	delete(c.pend, id)
	c.pendMu.Unlock()
	if ch != nil {
		ch <- resp // capacity 1, and the id is gone: never blocks
	}
}

// respChans holds the channels calls wait on. A channel goes back only
// once its answer was received: deliver sends at most once per id, so it
// is then empty and no deliver holds it; one given up (the answer may still
// be on its way) is left to the collector.
var respChans = sync.Pool{New: func() any { return make(chan *jsonrpc.Response, 1) }}

// fail records why the read loop ended and wakes every call in flight.
func (c *stdioConn) fail(err error) {
	c.pendMu.Lock()
	defer c.pendMu.Unlock()
	if c.readErr != nil {
		return
	}
	c.readErr = err
	close(c.dead)
}

// errCallTimeout: a relayed call's time limit passed before its answer.
var errCallTimeout = errors.New("the call's time limit passed")

// callTimers are stopped timers for calls' time limits: a call takes one
// and gives it back stopped, instead of a context.WithTimeout (seven
// allocations) per call. Since Go 1.23 a stopped timer delivers nothing
// stale after Reset.
var callTimers = sync.Pool{New: func() any {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return t
}}

// call sends the request build writes (given its id) and waits for its
// response, the end of the connection, ctx, or the deadline (none when
// zero); when ctx ends or the deadline passes first, the child is told with
// notifications/cancelled, as the go-sdk tells it, and the error is ctx's,
// or errCallTimeout.
func (c *stdioConn) call(ctx context.Context, deadline time.Time, build func(b []byte, id string) ([]byte, error)) (*jsonrpc.Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var expired <-chan time.Time // nil: no deadline
	if !deadline.IsZero() {
		left := time.Until(deadline)
		if left <= 0 {
			return nil, errCallTimeout
		}
		t := callTimers.Get().(*time.Timer)
		t.Reset(left)
		defer func() { t.Stop(); callTimers.Put(t) }()
		expired = t.C
	}
	id := rawIDPrefix + strconv.FormatUint(c.nextID.Add(1), 10)
	ch := respChans.Get().(chan *jsonrpc.Response)
	c.pendMu.Lock()
	if c.readErr != nil {
		err := c.readErr
		c.pendMu.Unlock()
		return nil, closedErr(err)
	}
	if c.pend == nil {
		c.pend = map[string]chan *jsonrpc.Response{}
	}
	c.pend[id] = ch
	c.pendMu.Unlock()
	forget := func() {
		c.pendMu.Lock()
		delete(c.pend, id)
		c.pendMu.Unlock()
	}
	if err := c.writeLine(func(b []byte) ([]byte, error) { return build(b, id) }); err != nil {
		forget()
		return nil, fmt.Errorf("calling %q: %w", "tools/call", err)
	}
	select {
	case r := <-ch:
		respChans.Put(ch)
		return r, nil
	case <-c.dead:
		select { // an answer that came before the end still counts
		case r := <-ch:
			respChans.Put(ch)
			return r, nil
		default:
		}
		forget()
		c.pendMu.Lock()
		err := c.readErr
		c.pendMu.Unlock()
		return nil, closedErr(err)
	case <-c.closed:
		forget()
		return nil, closedErr(io.EOF)
	case <-ctx.Done():
		forget()
		go c.cancelled(id, ctx.Err())
		return nil, ctx.Err()
	case <-expired:
		forget()
		go c.cancelled(id, context.DeadlineExceeded)
		return nil, errCallTimeout
	}
}

func closedErr(err error) error {
	return fmt.Errorf("%w: calling %q: %w", mcp.ErrConnectionClosed, "tools/call", err)
}

// badResult is a result the upstream sent that does not decode: the
// connection goes on.
type badResult struct{ err error }

func (e badResult) Error() string { return e.err.Error() }
func (e badResult) Unwrap() error { return e.err }

// cancelled tells the child a call was given up, as the go-sdk does.
func (c *stdioConn) cancelled(id string, why error) {
	params, err := json.Marshal(&mcp.CancelledParams{Reason: why.Error(), RequestID: id})
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), cancelNotifyTimeout)
	defer cancel()
	_ = c.Write(ctx, &jsonrpc.Request{Method: "notifications/cancelled", Params: params})
}
