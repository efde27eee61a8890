package kernel

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/kernel/httpguard"
	"github.com/bulwarkmcp/bulwark/kernel/internal/jsonscan"
	"github.com/bulwarkmcp/bulwark/kernel/pipeio"
)

// The stdio fast path. ServeStdio reads the client's lines itself, parses
// each once (httpguard.ParseMessage, the HTTP guards' parser), and once
// the session is ready answers tools/call, tools/list and ping with the
// HTTP fast path's core (fastCallable, fastResult, appendResult,
// appendResponse, fastStream), writing the response lines itself.
// Everything else is passed, byte for byte, to the go-sdk's session, which
// reads it from a pipe and writes through the same serialized writer
// (stdioOut): initialize, notifications, logging/setLevel, resources,
// prompts, completion, responses to the server's own requests, and
// anything unusual.
//
// The fast path mirrors none of the session's state: it asks the go-sdk's
// session (mcp.ServerSession.InitializeParams) whether it holds initialize
// parameters, and reads there the version they name (the go-sdk's MRTR
// rule) and whether the client declared elicitation; it keeps only what it
// reads itself on the way in: that notifications/initialized came, and
// that logging/setLevel or server/discover came. Which lines and requests
// it takes is said once, by the functions docs/architecture.md lists
// (line, eligible, answers, fastCallable, fastListable, streamToken).
//
// Concurrency is the go-sdk's: each fast call runs in its own goroutine
// (the go-sdk answers calls concurrently), notifications/cancelled
// cancels a fast call by its id (and goes on to the go-sdk, which cancels
// its own), a request whose id is in flight on the fast path gets no
// answer (the go-sdk's jsonrpc2 drops it), and the drain's maxOwed bounds
// the requests in flight on both paths. TestStdioFastPathEquivalence and
// FuzzStdioFastPath send the same lines through both and compare.

// stdioFront is the reading side of one stdio session with the fast path.
type stdioFront struct {
	s    *Server
	ctx  context.Context // the calls' parent: cancelled when the session ends
	out  *stdioOut
	d    *drain
	list fastList // the tools/list results

	session *mcp.ServerSession // the go-sdk's session: the state the answers depend on is its

	mu        sync.Mutex
	calls     map[string]context.CancelFunc // fast calls in flight, by id key
	wg        sync.WaitGroup                // fast calls in flight
	stopped   bool                          // no fast call starts any more
	announced bool                          // notifications/initialized was read
	handedOff bool                          // logging/setLevel or server/discover was read: legacy requests are the go-sdk's
	workers   *workers                      // the goroutines the reading and the fast calls run on
	metaOK    []byte                        // the last _meta modernMeta accepted (read loop only)

	// The reading (readLoop) moves between goroutines: one reads at a time,
	// and these are its state. When a line starts a fast call, the reader
	// hands the reading to a worker and runs the call itself (next), so a
	// call waits for no goroutine to be scheduled before it starts.
	in      io.Reader
	pw      *io.PipeWriter
	br      *bufio.Reader
	long    []byte // a line longer than br's buffer, so far
	next    func() // the fast call the line just read starts
	reading func() // readLoop, as a job for a worker (made once)
	readErr error  // the read error that came with the line of next
}

// serveStdioFast serves with the fast path in front of the go-sdk.
func (s *Server) serveStdioFast(ctx context.Context, in io.ReadCloser, out io.WriteCloser) error {
	list, err := s.fast.lists()
	if err != nil {
		s.logger.Warn("stdio fast path off: encoding tools/list failed", "error", err.Error())
		return s.serveStdioSDK(ctx, in, out)
	}
	callCtx, stopCalls := context.WithCancel(ctx)
	defer stopCalls()
	d := newDrain(callCtx)
	f := &stdioFront{s: s, ctx: callCtx, d: d, list: list, calls: map[string]context.CancelFunc{}, workers: newWorkers()}
	// stdin and stdout, when they are pipes or sockets, get descriptors of
	// their own that the runtime's poller waits on, read and written
	// without its system-call bookkeeping (kernel/pipeio: fewer thread
	// wake-ups a call).
	src, dst, own := ownPipes(in, out)
	f.out = &stdioOut{w: pipeio.Writer(dst), s: s, ctx: ctx, d: d}
	pr, pw := io.Pipe()
	f.in, f.pw, f.br = src, pw, bufio.NewReaderSize(pipeio.Reader(src), 64<<10)
	f.reading = f.readLoop
	f.session, err = s.mcp.Connect(ctx, &mcp.IOTransport{Reader: pr, Writer: &sdkOut{out: f.out}, MaxLineLength: maxStdioLine}, nil)
	if err == nil {
		s.taskSess.m.Store(f.session, struct{}{}) // this front answers task requests (tasks.go)
		defer s.taskSess.m.Delete(f.session)
		go f.readLoop()
		err = runSession(ctx, f.session)
	}
	f.out.close()
	stopCalls()
	_ = pr.Close()
	_ = in.Close()
	if own[0] != nil {
		_ = own[0].Close() // ends a read waiting in the poller
	}
	f.stop()
	if own[1] != nil {
		_ = own[1].Close()
	}
	_ = out.Close()
	return err
}

// runSession is what the go-sdk's Server.Run does once connected: it
// waits for the session to end, or for ctx to, then closes it.
func runSession(ctx context.Context, ss *mcp.ServerSession) error {
	done := make(chan error, 1)
	go func() { done <- ss.Wait() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		_ = ss.Close()
		<-done
		return ctx.Err()
	}
}

// ownPipes returns what to read and write instead of in and out: a
// non-blocking descriptor of its own for each that is a blocking pipe or
// socket (pipeio.Reopen), also returned in own for closing, or in or out
// itself.
func ownPipes(in io.Reader, out io.Writer) (src io.Reader, dst io.Writer, own [2]*os.File) {
	src, dst = in, out
	if f, ok := in.(*os.File); ok {
		if own[0] = pipeio.Reopen(f, false); own[0] != nil {
			src = own[0]
		}
	}
	if f, ok := out.(*os.File); ok {
		if own[1] = pipeio.Reopen(f, true); own[1] != nil {
			dst = own[1]
		}
	}
	return src, dst, own
}

// stop waits for the fast calls in flight and lets no other start.
func (f *stdioFront) stop() {
	f.mu.Lock()
	f.stopped = true
	f.mu.Unlock()
	f.wg.Wait()
	f.workers.close()
}

// readLoop reads the client's lines (read) to the end, on whichever
// goroutine holds the reading: when a line starts a fast call, the reading
// goes on on a worker, and this goroutine runs the call, then returns (to
// the worker pool, when it is a worker).
func (f *stdioFront) readLoop() {
	job, err := f.read()
	if job != nil {
		f.workers.run(f.reading)
		job()
		return
	}
	if errors.Is(err, io.EOF) {
		f.d.wait() // every request read is answered, on either path
		err = nil
	}
	f.pw.CloseWithError(err) // nil: the go-sdk reads EOF
}

// read reads the client's lines until the end of input (io.EOF), a read
// error, or the go-sdk's end (a pipe error), or until a line starts a fast
// call, whose job it returns (with a nil error) for the caller to run once
// it has handed the reading on.
func (f *stdioFront) read() (job func(), err error) {
	if err := f.readErr; err != nil {
		return nil, err // the error that came with the last call's line
	}
	for {
		f.d.room()
		chunk, err := f.br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			f.long = appendDoubling(f.long, chunk)
			if len(f.long) > maxStdioLine+1 {
				return nil, f.passAll(f.long, f.br, f.pw)
			}
			continue
		}
		line := chunk
		if len(f.long) > 0 {
			line = appendDoubling(f.long, chunk)
			f.long = f.long[:0]
			if cap(f.long) > 64<<10 {
				f.long = nil
			}
		}
		if len(line) > 0 {
			if len(line) > maxStdioLine+1 {
				return nil, f.passAll(line, f.br, f.pw)
			}
			if all, perr := f.line(line, f.pw); perr != nil {
				return nil, perr
			} else if all {
				return nil, f.passAll(line, f.br, f.pw)
			}
			if job := f.next; job != nil {
				f.next, f.readErr = nil, err
				return job, nil
			}
		}
		if err != nil {
			return nil, err
		}
	}
}

// appendDoubling appends p to b, doubling b's capacity when it grows (append
// grows a large slice by a quarter at a time, which costs a 3 MiB line
// about five times its size in copies).
func appendDoubling(b, p []byte) []byte {
	if cap(b)-len(b) < len(p) {
		nb := make([]byte, len(b), 2*cap(b)+len(p))
		copy(nb, b)
		b = nb
	}
	return append(b, p...)
}

// line routes one line (with its newline, if any). all is true when the
// fast path cannot vouch for it: the caller then hands it, and the rest of
// the input, to the go-sdk. A line rule of the fast paths (docs/architecture.md).
func (f *stdioFront) line(line []byte, pw *io.PipeWriter) (all bool, err error) {
	content := bytes.TrimSuffix(line, []byte("\n"))
	if len(bytes.Trim(content, " \t\r")) == 0 {
		_, err = pw.Write(line) // white space between values
		return false, err
	}
	if !oneObject(content) {
		return true, nil
	}
	env, perr := httpguard.ParseMessage(content)
	if perr != nil {
		return true, nil
	}
	key, hasID := idKey(env)
	if env.ID != nil && !hasID {
		return true, nil
	}
	if hasID && !env.Response {
		f.mu.Lock()
		_, dup := f.calls[key]
		f.mu.Unlock()
		if dup { // the go-sdk's jsonrpc2 drops a request whose id is in flight
			return false, nil
		}
		if !f.d.owes(key) && (f.answersTask(env, key, content) || f.answers(env, key)) {
			return false, nil
		}
	}
	if _, derr := jsonrpc.DecodeMessage(content); derr != nil {
		return true, nil // the go-sdk's reader would stop here
	}
	f.observe(env, content)
	if hasID && !env.Response {
		f.d.request(key)
	}
	_, err = pw.Write(line)
	return false, err
}

// oneObject reports whether a line holds what the go-sdk's stream reader
// reads as one value ending at the line's end: it starts with '{' and ends
// with '}' (or "}\r"). Whether it is valid is ParseMessage's to say.
func oneObject(content []byte) bool {
	content = bytes.TrimSuffix(content, []byte("\r"))
	return len(content) >= 2 && content[0] == '{' && content[len(content)-1] == '}'
}

// passAll hands line and the rest of the input to the go-sdk once the fast
// calls in flight have finished, counting requests for the drain as the
// go-sdk-only path does.
func (f *stdioFront) passAll(line []byte, br *bufio.Reader, pw *io.PipeWriter) error {
	f.stop()
	w := &drainWriter{w: pw, d: f.d}
	if _, err := w.Write(line); err != nil {
		return err
	}
	if _, err := io.Copy(w, br); err != nil {
		return err
	}
	return io.EOF
}

// drainWriter counts the requests written to the go-sdk, like drainReader.
type drainWriter struct {
	w     io.Writer
	d     *drain
	split lineSplitter
}

func (w *drainWriter) Write(p []byte) (int, error) {
	w.d.room()
	w.split.lines(p, func(e httpguard.Message) {
		if key, ok := idKey(e); ok && e.Method != "" {
			w.d.request(key)
		}
	})
	return w.w.Write(p)
}

// observe notes what the fast path keeps of a message going to the go-sdk.
func (f *stdioFront) observe(env httpguard.Message, content []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch env.Method {
	case "notifications/initialized":
		f.announced = true
	case "logging/setLevel", "server/discover":
		// The session's log level decides which log notifications a legacy
		// call sends; server/discover replaces the session's initialize
		// parameters. The go-sdk keeps both.
		f.handedOff = true
	case "notifications/cancelled":
		if cancel, ok := f.calls[cancelledID(content)]; ok {
			cancel()
		}
	}
}

// cancelledID is the key of the request a notifications/cancelled names,
// read as the go-sdk reads it (params.requestId, a number or a string), or
// "".
func cancelledID(content []byte) string {
	var msg struct {
		Params map[string]json.RawMessage `json:"params"`
	}
	if json.Unmarshal(content, &msg) != nil {
		return ""
	}
	var id any
	if json.Unmarshal(msg.Params["requestId"], &id) != nil {
		return ""
	}
	switch v := id.(type) {
	case float64:
		return strconv.FormatInt(int64(v), 10)
	case string:
		b, err := marshalWire(v)
		if err == nil {
			return string(b)
		}
	}
	return ""
}

// eligible is the stdio fast path's rule for the session's state: whether
// it may answer a request of this version now (modern: 2026-07-28), read
// from the go-sdk's session. Until the session holds initialize parameters
// (from initialize, server/discover or the first 2026-07-28 request) every
// request is the go-sdk's; a legacy request also waits for
// notifications/initialized, and goes to the go-sdk for good after
// logging/setLevel or server/discover. elicit is whether the client
// declared elicitation at initialize (a gated call may then ask the person
// with a session request: the go-sdk's; a 2026-07-28 request declares its
// own, which fastCallable reads). complete is the go-sdk's MRTR rule: a
// result from the tool's handler is marked resultType "complete" when the
// session's parameters name 2026-07-28 or later, whatever the request's
// own version. A session rule of the fast paths (docs/architecture.md).
func (f *stdioFront) eligible(modern bool) (ok, elicit, complete bool) {
	f.mu.Lock()
	stopped, announced, handedOff := f.stopped, f.announced, f.handedOff
	f.mu.Unlock()
	p := f.session.InitializeParams()
	if stopped || p == nil || (!modern && (!announced || handedOff)) {
		return false, false, false
	}
	elicit = !modern && p.Capabilities != nil && p.Capabilities.Elicitation != nil
	return true, elicit, p.ProtocolVersion >= fastModernVersion
}

// modernMeta is modernMeta remembering the last _meta it accepted: a
// client sends the same one on every call, and decoding it (a generic
// value, re-encoded into the go-sdk's types) was a sixth of what a call
// allocated on the gateway's front. modernMeta depends on the bytes alone,
// so equal bytes get its answer unchanged. It runs on the read loop only;
// a _meta over 4 KiB is not kept.
func (f *stdioFront) modernMeta(raw json.RawMessage) bool {
	if len(raw) > 0 && bytes.Equal(raw, f.metaOK) {
		return true
	}
	if !modernMeta(raw) {
		return false
	}
	if len(raw) <= 4<<10 {
		f.metaOK = append(f.metaOK[:0], raw...)
	}
	return true
}

// answers answers a request on the fast path when it can, and reports
// whether it did. A request rule of the fast paths (docs/architecture.md).
func (f *stdioFront) answers(env httpguard.Message, key string) bool {
	modern := env.ProtocolVersion == fastModernVersion
	if env.OtherParams || (env.ProtocolVersion != "" && !modern) {
		return false
	}
	ok, elicit, complete := f.eligible(modern)
	// 2026-07-28 has no ping (the go-sdk answers -32601), and a request
	// whose _meta the go-sdk would refuse is its to refuse.
	if !ok || (modern && (env.Method == "ping" || !f.modernMeta(env.Meta))) {
		return false
	}
	switch env.Method {
	case "ping", "tools/list":
		if env.WantsNotifications || (env.Method == "tools/list" && !f.s.fastListable()) {
			return false
		}
		res := []byte("{}")
		if env.Method == "tools/list" {
			res = f.list.legacy
			if modern {
				res = f.list.modern
			}
		}
		f.s.fast.answered.Add(1)
		f.respond(key, env.ID, func(b []byte) ([]byte, error) { return append(b, res...), nil })
		return true
	case "tools/call":
		h, ok := f.s.fastCallable(env.Name, env.Meta, elicit)
		if !ok {
			return false
		}
		// Notifications: the request's progressToken; log notifications at
		// the request's level in 2026-07-28 (the go-sdk reads it from _meta),
		// none under a legacy version (the session's level, which the fast
		// path leaves to the go-sdk once set).
		var token any
		var level string
		if env.WantsNotifications {
			tok, lvl, ok := streamToken(env.Meta, modern)
			if !ok {
				return false
			}
			token = tok
			if modern {
				level = lvl
			}
		}
		return f.call(env, key, h, token, level, modern, complete)
	}
	return false
}

// answersTask answers a task request (tasks.go) of a 2025-11-25 session
// when the server serves tasks, and reports whether it did. Its job is
// f.next, as a fast call's; it is cancelled, drained and kept unique by
// id like one. A request rule of the fast paths (docs/architecture.md).
func (f *stdioFront) answersTask(env httpguard.Message, key string, content []byte) bool {
	if f.s.opts.Tasks == nil || env.ProtocolVersion != "" || !isTaskMethod(env.Method) ||
		(env.Method == "tools/call" && !env.OtherParams) || f.s.tasksOffered() == nil {
		return false
	}
	f.mu.Lock()
	stopped, announced := f.stopped, f.announced
	f.mu.Unlock()
	p := f.session.InitializeParams()
	if stopped || !announced || p == nil || p.ProtocolVersion != TaskVersion {
		return false
	}
	tr, ok, perr := parseTaskRequest(env.Method, content)
	if !ok {
		return false
	}
	f.mu.Lock()
	ctx, cancel := context.WithCancel(f.ctx)
	f.calls[key] = cancel
	f.wg.Add(1)
	f.mu.Unlock()
	f.d.request(key)
	f.next = func() {
		defer f.wg.Done()
		defer cancel()
		res, err := f.s.answerTask(ctx, tr, perr, f.session, nil) // a refusal at admission is its JSON-RPC error
		f.forget(key)
		if err != nil {
			var rpc *jsonrpc.Error
			if !errors.As(err, &rpc) {
				rpc = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "internal error"}
			}
			f.respondError(key, env.ID, rpc)
			return
		}
		f.respond(key, env.ID, func(b []byte) ([]byte, error) { return append(b, res...), nil })
	}
	return true
}

// call starts a tools/call on the fast path: its job is f.next, which the
// read loop runs once it has handed the reading to a worker.
// complete is the go-sdk's MRTR rule: a result from the tool's handler is
// marked resultType "complete" when the session's parameters name
// 2026-07-28 or later, whatever the request's own version.
func (f *stdioFront) call(env httpguard.Message, key string, h mcp.ToolHandler, token any, level string, modern, complete bool) bool {
	f.mu.Lock()
	if f.stopped {
		f.mu.Unlock()
		return false
	}
	ctx, cancel := context.WithCancel(f.ctx)
	f.calls[key] = cancel
	f.wg.Add(1)
	f.mu.Unlock()
	f.d.request(key)
	f.s.fast.answered.Add(1)
	f.next = func() { // run by the reader once it has handed the reading on (readLoop)
		defer f.wg.Done()
		defer cancel()
		if err := ctx.Err(); err != nil { // cancelled before it ran: the go-sdk answers the error
			f.forget(key)
			f.respondError(key, env.ID, err)
			return
		}
		// A call that asked for no notification has no stream: its handler's
		// Progress and Log find no session and send nothing, as the go-sdk's.
		cctx, st := ctx, (*fastStream)(nil)
		if token != nil || level != "" {
			st = &fastStream{token: token, level: level, out: stdioStream{out: f.out, ctx: ctx}}
			cctx = context.WithValue(ctx, fastStreamKey{}, st)
		}
		res, err, handled := f.s.fastResult(cctx, h, env.Name, env.Arguments, nil)
		if st != nil {
			// Nothing after the response. The go-sdk may still write a
			// notification sent, late, with another context than the
			// call's (the gateway's relayed progress): a client ignores
			// progress after the result, and the fast path does not send it.
			st.finish()
		}
		f.forget(key)
		if err != nil || res == nil {
			f.respondError(key, env.ID, err)
			return
		}
		f.respond(key, env.ID, func(b []byte) ([]byte, error) { return f.s.appendResult(b, res, modern, complete && handled) })
	}
	return true
}

// forget ends the call keyed id: its id may be used again.
func (f *stdioFront) forget(key string) {
	f.mu.Lock()
	delete(f.calls, key)
	f.mu.Unlock()
}

// respond writes a response line.
func (f *stdioFront) respond(key string, rawID json.RawMessage, result func([]byte) ([]byte, error)) {
	bp := getBuf()
	defer putBuf(bp)
	b, err := appendResponse((*bp)[:0], []byte(key), result)
	*bp = b
	if err != nil {
		f.respondError(key, rawID, err)
		return
	}
	*bp = append(b, '\n')
	f.out.answer(f.ctx, key, *bp)
}

// respondError writes the error response the go-sdk writes for a
// handler's error (admission's rate-limit or outage refusal, a call
// cancelled before it started), with the go-sdk's own encoder.
func (f *stdioFront) respondError(key string, rawID json.RawMessage, err error) {
	if err == nil { // unreachable: the tool layer always answers
		err = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "internal error"}
	}
	id, idErr := sdkID(rawID)
	b, encErr := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: id, Error: err})
	if idErr != nil || encErr != nil {
		return // unreachable: the id passed wireID, and an error always encodes
	}
	f.out.answer(f.ctx, key, append(b, '\n'))
}

// sdkID is a request's id as the go-sdk holds it.
func sdkID(raw json.RawMessage) (jsonrpc.ID, error) {
	if raw[0] != '"' {
		n, err := strconv.ParseInt(string(raw), 10, 64)
		if err != nil {
			return jsonrpc.ID{}, err
		}
		return jsonrpc.MakeID(float64(n))
	}
	v, err := jsonscan.DecodeString(raw[1:len(raw)-1], bytes.IndexByte(raw, '\\') >= 0)
	if err != nil {
		return jsonrpc.ID{}, err
	}
	return jsonrpc.MakeID(v)
}

// workerIdle is how long a fast-call goroutine waits for the next call
// before it ends.
const workerIdle = 10 * time.Second

// workers runs fast calls on goroutines kept between calls: a new goroutine
// per call paid for its stack's growth on every call (the tool layer needs
// more than a fresh goroutine's stack). At most as many exist as calls were
// in flight at once (the drain's maxOwed bounds that); an idle one ends
// after workerIdle, and all end when the session does.
type workers struct {
	jobs chan func()   // unbuffered: a send succeeds only to an idle worker
	quit chan struct{} // closed when the session ends
	once sync.Once
}

func newWorkers() *workers { return &workers{jobs: make(chan func()), quit: make(chan struct{})} }

// run runs job on an idle worker, or on a new one.
func (w *workers) run(job func()) {
	select {
	case w.jobs <- job:
	default:
		go w.work(job)
	}
}

func (w *workers) work(job func()) {
	t := time.NewTimer(workerIdle)
	defer t.Stop()
	for {
		job()
		t.Reset(workerIdle)
		select {
		case job = <-w.jobs:
		case <-t.C:
			return
		case <-w.quit:
			return
		}
	}
}

// close ends the idle workers; no job may be sent after it.
func (w *workers) close() { w.once.Do(func() { close(w.quit) }) }
