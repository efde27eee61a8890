package kernel

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/kernel/httpguard"
)

// A tools/call that carries a progressToken or (2026-07-28) a log level in
// _meta is answered on the fast path as the go-sdk's stateless Streamable
// HTTP handler answers it: an event stream (text/event-stream,
// Cache-Control no-cache, no-transform, Connection keep-alive), one
// "event: message" per message and no event ids — the progress and log
// notifications the handler sends, in order, then the response. Log
// notifications go out at or above the level: the request's in 2026-07-28
// (none without one; an unknown level name counts as debug, as in the
// go-sdk's compareLevels), "info" under a legacy version (the go-sdk's
// stateless session for a legacy request starts at info and ignores _meta).
// Tokens or levels of other JSON types, and legacy requests that want
// notifications without a token, stay with the go-sdk.
//
// Each event is written and flushed when the handler sends it: nothing is
// queued, so a handler flooding progress to a client that does not read
// blocks in the socket write (net/http's buffer) instead of growing memory,
// and the fast path starts no goroutine a disconnected client could leak
// (the handler's context is the request's: cancelled on disconnect).

// fastStream is where the notifications of one call on the fast path go,
// in order, before its response: an HTTP event stream (httpStream), or
// stdio lines (fastpath_stdio.go).
type fastStream struct {
	token any    // the request's progressToken, as the go-sdk decodes it; nil for none
	level string // the request's log level; "" sends no log notifications

	mu   sync.Mutex
	out  streamOut
	done bool // the response is written: later notifications are dropped
}

// streamOut writes a call's messages: notifications, then (last) its
// response. fastStream serializes the calls and drops what comes after
// the response.
type streamOut interface {
	message(msg []byte, last bool)
}

type fastStreamKey struct{}

// fastStreamFrom returns the event stream a call's progress goes to on the
// fast path, or nil. newCall reads it once, into the Call (Call.stream):
// a handler may report progress or log with another context than its
// call's (the gateway relays an upstream's progress from the upstream
// session's notification handler), and the Call is what it holds.
func fastStreamFrom(ctx context.Context) *fastStream {
	st, _ := ctx.Value(fastStreamKey{}).(*fastStream)
	return st
}

// streamToken reports whether a request that wants notifications is one the
// fast path streams: in 2026-07-28 its _meta (already checked by
// modernMeta) has a progressToken that is absent or a string or number, and
// a log level that is absent or a string; under a legacy version it has a
// string or number progressToken (the level is then "info"). It returns
// both. A request rule of the fast paths (docs/architecture.md).
func streamToken(raw json.RawMessage, modern bool) (token any, level string, ok bool) {
	var meta map[string]any
	if json.Unmarshal(raw, &meta) != nil {
		return nil, "", false
	}
	if !modern {
		switch tok := meta["progressToken"].(type) {
		case string, float64:
			return tok, "info", true
		}
		return nil, "", false
	}
	if v, present := meta[mcp.MetaKeyLogLevel]; present {
		if level, ok = v.(string); !ok {
			return nil, "", false
		}
	}
	switch tok := meta["progressToken"].(type) {
	case string, float64:
		return tok, level, true
	case nil:
		_, present := meta["progressToken"]
		return nil, level, !present
	}
	return nil, "", false
}

// logLevels orders the MCP log levels as the go-sdk's compareLevels does
// (by their slog levels); a name not listed counts as debug.
var logLevels = map[mcp.LoggingLevel]int{"debug": 0, "info": 1, "notice": 2, "warning": 3, "error": 4, "critical": 5, "alert": 6, "emergency": 7}

// log sends a log notification as the go-sdk's ServerSession.Log writes it
// for a 2026-07-28 request: only at or above the request's level.
func (st *fastStream) log(p *mcp.LoggingMessageParams) {
	if st.level == "" || logLevels[p.Level] < logLevels[mcp.LoggingLevel(st.level)] {
		return
	}
	params, err := marshalWire(p)
	if err != nil {
		return
	}
	b := make([]byte, 0, len(params)+64)
	b = append(b, `{"jsonrpc":"2.0","method":"notifications/message","params":`...)
	b = append(b, params...)
	st.event(append(b, '}'), false)
}

// progress sends a progress notification as the go-sdk's NotifyProgress
// writes it on the request's stream.
func (st *fastStream) progress(p *mcp.ProgressNotificationParams) {
	params, err := marshalWire(p)
	if err != nil {
		return
	}
	b := make([]byte, 0, len(params)+64)
	b = append(b, `{"jsonrpc":"2.0","method":"notifications/progress","params":`...)
	b = append(b, params...)
	st.event(append(b, '}'), false)
}

// event writes one message of the call; last marks the response.
func (st *fastStream) event(msg []byte, last bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.done {
		return
	}
	st.done = last
	st.out.message(msg, last)
}

// finish drops every later message: the call's response is next.
func (st *fastStream) finish() {
	st.mu.Lock()
	st.done = true
	st.mu.Unlock()
}

// httpStream is an HTTP call's event stream: one SSE event per message,
// the headers before the first.
type httpStream struct {
	w       http.ResponseWriter
	header  http.Header // what writeFast sets, discarded: the stream has its own
	status  int
	started bool
}

func (hs *httpStream) message(msg []byte, _ bool) {
	if !hs.started {
		hs.started = true
		h := hs.w.Header()
		h.Set("Cache-Control", "no-cache, no-transform")
		h.Set("Connection", "keep-alive")
		h.Set("Content-Type", "text/event-stream")
		hs.w.WriteHeader(http.StatusOK)
	}
	// A write error (the client left) is the handler's context's to report.
	_, _ = hs.w.Write([]byte("event: message\ndata: "))
	_, _ = hs.w.Write(msg)
	_, _ = hs.w.Write([]byte("\n\n"))
	_ = http.NewResponseController(hs.w).Flush()
}

// streamWriter is the http.ResponseWriter fastCall writes its response to:
// writeFast's one JSON body becomes the stream's last event; anything else
// (an internal error before any event) passes through unchanged.
type streamWriter struct {
	st *fastStream
	hs *httpStream
}

func (sw streamWriter) Header() http.Header {
	if sw.hs.header == nil {
		sw.hs.header = http.Header{}
	}
	return sw.hs.header
}

func (sw streamWriter) WriteHeader(code int) { sw.hs.status = code }

func (sw streamWriter) Write(b []byte) (int, error) {
	st, hs := sw.st, sw.hs
	if hs.status == http.StatusOK || hs.status == 0 {
		st.event(b, true)
		return len(b), nil
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if hs.started || st.done {
		return len(b), nil // unreachable: fastCall's errors come before any event
	}
	st.done = true
	for k, v := range hs.header {
		hs.w.Header()[k] = v
	}
	hs.w.WriteHeader(hs.status)
	return hs.w.Write(b)
}

// fastCallStream is fastCall answered as an event stream.
func (s *Server) fastCallStream(w http.ResponseWriter, r *http.Request, env httpguard.Message, modern bool, id []byte, h mcp.ToolHandler, token any, level string) {
	hs := &httpStream{w: w}
	st := &fastStream{token: token, level: level, out: hs}
	r = r.WithContext(context.WithValue(r.Context(), fastStreamKey{}, st))
	s.fastCall(streamWriter{st: st, hs: hs}, r, env, modern, id, h)
}
