package kernel

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/kernel/httpguard"
)

// A 2026-07-28 tools/call that carries a progressToken (and no log level)
// is answered on the fast path as the go-sdk's stateless Streamable HTTP
// handler answers it: an event stream (text/event-stream, Cache-Control
// no-cache, no-transform, Connection keep-alive), one "event: message"
// per message and no event ids — the progress notifications the handler
// sends, in order, then the response. Legacy versions, where the go-sdk's
// session also forwards log notifications, and requests with a log level
// stay with the go-sdk.
//
// Each event is written and flushed when the handler sends it: nothing is
// queued, so a handler flooding progress to a client that does not read
// blocks in the socket write (net/http's buffer) instead of growing memory,
// and the fast path starts no goroutine a disconnected client could leak
// (the handler's context is the request's: cancelled on disconnect).

// fastStream is the event stream of one request.
type fastStream struct {
	token any // the request's progressToken, as the go-sdk decodes it

	mu      sync.Mutex
	w       http.ResponseWriter
	header  http.Header // what writeFast sets, discarded: the stream has its own
	status  int
	started bool
	done    bool // the response is written: later notifications are dropped
}

type fastStreamKey struct{}

// fastStreamFrom returns the event stream a call's progress goes to on the
// fast path, or nil.
func fastStreamFrom(ctx context.Context) *fastStream {
	st, _ := ctx.Value(fastStreamKey{}).(*fastStream)
	return st
}

// streamToken reports whether a request that wants notifications is one the
// fast path streams: its _meta (already checked by modernMeta) has a string
// or number progressToken and no log level. It returns the token.
func streamToken(raw json.RawMessage) (any, bool) {
	var meta map[string]any
	if json.Unmarshal(raw, &meta) != nil {
		return nil, false
	}
	if _, level := meta[mcp.MetaKeyLogLevel]; level {
		return nil, false
	}
	switch tok := meta["progressToken"].(type) {
	case string, float64:
		return tok, true
	}
	return nil, false
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

// event writes one SSE event, the headers first; last marks the response.
func (st *fastStream) event(msg []byte, last bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.done {
		return
	}
	st.done = last
	if !st.started {
		st.started = true
		h := st.w.Header()
		h.Set("Cache-Control", "no-cache, no-transform")
		h.Set("Connection", "keep-alive")
		h.Set("Content-Type", "text/event-stream")
		st.w.WriteHeader(http.StatusOK)
	}
	// A write error (the client left) is the handler's context's to report.
	_, _ = st.w.Write([]byte("event: message\ndata: "))
	_, _ = st.w.Write(msg)
	_, _ = st.w.Write([]byte("\n\n"))
	_ = http.NewResponseController(st.w).Flush()
}

// streamWriter is the http.ResponseWriter fastCall writes its response to:
// writeFast's one JSON body becomes the stream's last event; anything else
// (an internal error before any event) passes through unchanged.
type streamWriter struct{ st *fastStream }

func (sw streamWriter) Header() http.Header {
	if sw.st.header == nil {
		sw.st.header = http.Header{}
	}
	return sw.st.header
}

func (sw streamWriter) WriteHeader(code int) { sw.st.status = code }

func (sw streamWriter) Write(b []byte) (int, error) {
	st := sw.st
	if st.status == http.StatusOK || st.status == 0 {
		st.event(b, true)
		return len(b), nil
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.started || st.done {
		return len(b), nil // unreachable: fastCall's errors come before any event
	}
	st.done = true
	for k, v := range st.header {
		st.w.Header()[k] = v
	}
	st.w.WriteHeader(st.status)
	return st.w.Write(b)
}

// fastCallStream is fastCall answered as an event stream.
func (s *Server) fastCallStream(w http.ResponseWriter, r *http.Request, env httpguard.Message, id []byte, token any) {
	st := &fastStream{token: token, w: w}
	r = r.WithContext(context.WithValue(r.Context(), fastStreamKey{}, st))
	s.fastCall(streamWriter{st}, r, env, true, id)
}
