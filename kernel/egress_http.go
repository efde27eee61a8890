package kernel

import (
	"bytes"
	"context"
	"mime"
	"net/http"
	"strconv"

	"github.com/bulwarkmcp/bulwark/kernel/internal/reqscope"
)

// egressHTTP runs the egress gate over every response body of next (the
// MCP endpoint, every guard included): a JSON body whole, once the handler
// is done; an event stream one event at a time, as each is flushed; any
// other body (a guard's plain-text refusal) scrubbed of secrets as text.
// The request's egress scope goes into its reqscope.Scope, where the
// request's call registers its secrets.
func (s *Server) egressHTTP(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r, sc := reqscope.Ensure(r)
		scope := &egressScope{server: &s.secrets}
		sc.Egress = scope
		ew := &egressWriter{w: w, s: s, scope: scope, ctx: r.Context()}
		next.ServeHTTP(ew, r)
		ew.finish()
	})
}

// Body forms the writer tells apart, from the response's Content-Type.
const (
	bodyUnknown = iota // nothing written yet
	bodyJSON           // one JSON-RPC message, gated when the handler is done
	bodyEvents         // an event stream, gated event by event
	bodyText           // anything else, scrubbed as text when the handler is done
)

// egressWriter holds back what the handler writes until it can be gated.
type egressWriter struct {
	w     http.ResponseWriter
	s     *Server
	scope *egressScope
	ctx   context.Context

	form   int
	code   int // the status the handler set; 0: none yet
	sent   bool
	buf    []byte
	failed error
}

func (e *egressWriter) Header() http.Header { return e.w.Header() }

// Unwrap gives http.ResponseController the writer underneath (deadlines).
func (e *egressWriter) Unwrap() http.ResponseWriter { return e.w }

func (e *egressWriter) WriteHeader(code int) {
	if e.code != 0 || e.sent {
		return
	}
	e.code = code
	if code < 200 && code != http.StatusSwitchingProtocols { // informational: passes
		e.w.WriteHeader(code)
		e.code = 0
	}
}

func (e *egressWriter) Write(p []byte) (int, error) {
	if e.failed != nil {
		return 0, e.failed
	}
	if e.form == bodyUnknown {
		e.form = bodyForm(e.w.Header().Get("Content-Type"))
	}
	e.buf = append(e.buf, p...)
	if e.form == bodyEvents {
		e.events(false)
	}
	return len(p), e.failed
}

// Flush writes the complete events of a stream and flushes them; other
// bodies are held until the handler is done.
func (e *egressWriter) Flush() {
	if e.form != bodyEvents {
		return
	}
	e.events(false)
	if f, ok := e.w.(http.Flusher); ok {
		f.Flush()
	}
}

func bodyForm(contentType string) int {
	mt, _, _ := mime.ParseMediaType(contentType)
	switch mt {
	case "application/json":
		return bodyJSON
	case "text/event-stream":
		return bodyEvents
	}
	return bodyText
}

// header sends the status line once, with the body's final length when it
// is known.
func (e *egressWriter) header(length int) {
	if e.sent {
		return
	}
	e.sent = true
	h := e.w.Header()
	if length >= 0 && h.Get("Content-Length") != "" {
		h.Set("Content-Length", strconv.Itoa(length))
	}
	if e.code == 0 {
		e.code = http.StatusOK
	}
	e.w.WriteHeader(e.code)
}

// finish gates and writes what is held once the handler is done.
func (e *egressWriter) finish() {
	switch e.form {
	case bodyUnknown:
		if e.code != 0 {
			e.header(-1)
		}
		return
	case bodyEvents:
		e.events(true)
		return
	case bodyJSON:
		e.buf = e.s.gateFramed(e.ctx, e.buf, e.scope)
	default:
		if out, n := e.scope.secrets().Scrub(string(e.buf)); n > 0 {
			e.buf = []byte(out)
		}
	}
	e.header(len(e.buf))
	_, e.failed = e.w.Write(e.buf)
}

// events writes every complete event held ("\n\n" ends one; the rest,
// at the end, too), each data line gated as one message.
func (e *egressWriter) events(end bool) {
	e.header(-1)
	for e.failed == nil {
		i := bytes.Index(e.buf, []byte("\n\n"))
		if i < 0 {
			if end && len(e.buf) > 0 { // an event left unfinished
				_, e.failed = e.w.Write(e.event(e.buf))
				e.buf = nil
			}
			return
		}
		_, e.failed = e.w.Write(e.event(e.buf[:i+2]))
		e.buf = e.buf[i+2:]
	}
}

// event gates the data lines of one event. The go-sdk and the fast path
// write each message as one "data: " line.
func (e *egressWriter) event(ev []byte) []byte {
	var out []byte
	for line := range bytes.Lines(ev) {
		data, ok := bytes.CutPrefix(line, []byte("data:"))
		if !ok {
			out = append(out, line...)
			continue
		}
		out = append(append(out, "data:"...), e.s.gateFramed(e.ctx, data, e.scope)...)
	}
	return out
}
