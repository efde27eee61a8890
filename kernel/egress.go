package kernel

// Pipeline step 18, the egress gate (kernel/egress): the last step before
// any byte reaches a client. It runs where the bytes are written — the
// stdio writer (stdioOut.write), the HTTP response writer (egressHTTP) and
// the transport of an in-process session (Connect) — so every message of
// every channel passes it: results, errors, every list, notifications,
// elicitation, sampling and input requests, on the fast paths and the
// go-sdk's. Nothing sent to a client can take another way. The secrets it
// removes are kept here too: the server's (serverSecrets) and those a call
// brings (callSecrets), which step 17 also scrubs from the audit record and
// the log (scrubRecord, scrubText).

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/kernel/audit"
	"github.com/bulwarkmcp/bulwark/kernel/egress"
	"github.com/bulwarkmcp/bulwark/kernel/internal/reqscope"
)

func init() {
	// the benchmarks' switch: the same call with and without the gate, in
	// one run (egress.SetGate, which works only in a test binary)
	egress.RegisterGateSwitch(func(v any, on bool) { v.(*Server).egressOff.Store(!on) })
}

// serverSecrets are the values no client may receive from this server: the
// configured credentials, Options.Secrets and what AddSecrets added. The
// set lives behind an atomic pointer, so that a printer walking a Server
// finds no value.
type serverSecrets struct {
	p atomic.Pointer[egress.Secrets]
}

func (s *serverSecrets) get() *egress.Secrets { return s.p.Load() }

func (s *serverSecrets) add(values ...string) {
	for {
		old := s.p.Load()
		if s.p.CompareAndSwap(old, old.With(values...)) {
			return
		}
	}
}

// AddSecrets registers values the server learned after New (a credential
// file read at start, say): from now on the egress gate removes them from
// every message to every client. Each must pass egress.CheckSecret; on an
// error nothing is added, and the error never quotes a value.
func (s *Server) AddSecrets(values ...string) error {
	for i, v := range values {
		if err := egress.CheckSecret(v); err != nil {
			return fmt.Errorf("kernel: secret %d: %w", i+1, err)
		}
	}
	s.secrets.add(values...)
	return nil
}

// egressScope is what one transport scope — an HTTP request, or every
// session over stdio and in-process transports — adds to the server's
// secrets: the values its calls registered (BYOK credentials and their
// parts, keys a handler loaded for the caller).
type egressScope struct {
	server *serverSecrets
	mu     sync.Mutex
	extra  *egress.Secrets
	// the last union built, and what it was built from
	union      *egress.Secrets
	fromServer *egress.Secrets
	fromExtra  *egress.Secrets
}

func (e *egressScope) add(values ...string) {
	e.mu.Lock()
	e.extra = e.extra.With(values...)
	e.mu.Unlock()
}

// secrets is the set the scope's messages are scrubbed of.
func (e *egressScope) secrets() *egress.Secrets {
	e.mu.Lock()
	defer e.mu.Unlock()
	base := e.server.get()
	if e.extra.Len() == 0 {
		return base
	}
	if e.union == nil || e.fromServer != base || e.fromExtra != e.extra {
		e.union, e.fromServer, e.fromExtra = base.Union(e.extra), base, e.extra
	}
	return e.union
}

// scopeFor returns the egress scope of the transport ctx belongs to: its
// HTTP request's, or the server's scope of stdio and in-process sessions.
func (s *Server) scopeFor(ctx context.Context) *egressScope {
	if sc := reqscope.From(ctx); sc != nil {
		if e, ok := sc.Egress.(*egressScope); ok {
			return e
		}
	}
	return s.sessions
}

// RegisterSecrets adds values to the call's secrets: the egress gate
// removes them from everything this call's transport sends (the result,
// its notifications and, over stdio, the rest of the session), and the
// kernel from the call's log lines and audit record. A server calls it
// with every secret it brings into a call beyond the declared credentials
// — a key it loaded for the caller, the part of a credential it relays
// separately — before it contacts an upstream or reads a cache. Blank
// values are ignored; a value shorter than egress.MinSecretLen is looked
// for as it is only (refuse such values where they enter, with
// egress.CheckSecret).
func (c *Call) RegisterSecrets(values ...string) {
	c.secrets = c.secrets.With(values...)
	if c.scope != nil {
		c.scope.add(values...)
	}
}

// ScrubJSON returns doc, an upstream's JSON answer, without the call's
// secrets (egress.ScrubJSON: every form the gate finds, in decoded strings,
// keys and numbers) and how many it removed. A server runs it on an answer
// before it keeps it, so that a cache holds nothing the gate would remove.
// doc itself comes back when nothing changed; the error says doc is not
// one JSON value.
func (c *Call) ScrubJSON(doc []byte) ([]byte, int, error) {
	return egress.ScrubJSON(doc, c.secrets)
}

// egressGate runs the egress gate over one message for scope sc. A message the
// gate cannot read (not one JSON value: never one the kernel or the go-sdk
// wrote) is replaced by a JSON-RPC internal error, logged.
func (s *Server) egressGate(ctx context.Context, msg []byte, sc *egressScope) []byte {
	if s.egressOff.Load() {
		return msg
	}
	out, rep, err := egress.Message(msg, sc.secrets())
	if err != nil {
		s.logger.ErrorContext(ctx, "egress gate: a message to the client was not one JSON value and was withheld", "bytes", len(msg))
		return []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"internal error"}}`)
	}
	if rep.Redacted > 0 {
		s.logger.WarnContext(ctx, "egress gate: secrets appeared in a message to the client and were removed; an upstream echoes them",
			"occurrences", rep.Redacted)
	}
	if rep.Cleaned > 0 {
		s.logger.Log(ctx, slog.LevelDebug, "egress gate: strings cleaned in a message to the client", "strings", rep.Cleaned)
	}
	return out
}

// gateFramed gates the message framed in b — surrounded by whitespace, as a
// line or an event's data is — keeping the frame; b itself when nothing
// changed. A frame of whitespace only is returned as it is.
func (s *Server) gateFramed(ctx context.Context, b []byte, sc *egressScope) []byte {
	start := len(b) - len(bytes.TrimLeft(b, " \t\r\n"))
	end := len(bytes.TrimRight(b, " \t\r\n"))
	if start >= end {
		return b
	}
	msg := b[start:end]
	out := s.egressGate(ctx, msg, sc)
	if len(out) == len(msg) && &out[0] == &msg[0] {
		return b
	}
	framed := make([]byte, 0, start+len(out)+len(b)-end)
	return append(append(append(framed, b[:start]...), out...), b[end:]...)
}

// gateLines gates each line of p (the stdio writer's messages, one a line).
func (s *Server) gateLines(ctx context.Context, p []byte, sc *egressScope) []byte {
	if bytes.IndexByte(p, '\n') >= len(p)-1 { // one line: the usual case
		return s.gateFramed(ctx, p, sc)
	}
	var out []byte
	for line := range bytes.Lines(p) {
		out = append(out, s.gateFramed(ctx, line, sc)...)
	}
	return out
}

// Connect connects the server to a client over t (an in-process
// transport, say), through the egress gate: every message the session
// writes is gated as over stdio. Serving MCP() directly would bypass it.
func (s *Server) Connect(ctx context.Context, t mcp.Transport, opts *mcp.ServerSessionOptions) (*mcp.ServerSession, error) {
	return s.mcp.Connect(ctx, &gatedTransport{Transport: t, s: s}, opts)
}

// gatedTransport gates what its connections write.
type gatedTransport struct {
	mcp.Transport
	s *Server
}

func (t *gatedTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &gatedConn{Connection: c, s: t.s}, nil
}

type gatedConn struct {
	mcp.Connection
	s *Server
}

// Write gates msg: encoded, gated, and decoded again when the gate changed
// it.
func (c *gatedConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	raw, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	out := c.s.egressGate(ctx, raw, c.s.sessions)
	if &out[0] != &raw[0] {
		if msg, err = jsonrpc.DecodeMessage(out); err != nil {
			return err
		}
	}
	return c.Connection.Write(ctx, msg)
}

// credentialParts are the secrets one credential value brings into a call:
// the value, and the token after its scheme ("Bearer t", "ApiKey org:k"),
// which an upstream may echo alone.
func credentialParts(v string) []string {
	if v == "" {
		return nil
	}
	if _, token, ok := strings.Cut(v, " "); ok && token != "" {
		return []string{v, token}
	}
	return []string{v}
}

// callSecrets are the secrets of one call: the server's (its configured
// credentials, Options.Secrets, AddSecrets) and, under BYOK, the values of
// the request's credential headers and their tokens, whether or not the
// handler asked for them. They are registered with the call's egress
// scope, so that the gate removes them from what the call's transport
// sends.
func (s *Server) callSecrets(c *Call) *egress.Secrets {
	sec := s.secrets.get()
	if !s.opts.BYOK || c.header == nil {
		return sec
	}
	var vals []string
	for _, cr := range s.creds {
		if v := strings.TrimSpace(c.header.Get(cr.header)); v != "" {
			vals = append(vals, credentialParts(v)...)
		}
	}
	if len(vals) == 0 {
		return sec
	}
	if c.scope != nil {
		c.scope.add(vals...)
	}
	return sec.With(vals...)
}

// scrubRecord scrubs the free-text fields of an audit record.
func scrubRecord(sec *egress.Secrets, rec *audit.Record) {
	if sec.Len() == 0 {
		return
	}
	rec.ErrorCode, _ = sec.Scrub(rec.ErrorCode)
	for k, v := range rec.Attrs {
		rec.Attrs[k], _ = sec.Scrub(v)
	}
}

// scrubText is t without the secrets of sec, for a log line.
func scrubText(sec *egress.Secrets, t string) string {
	out, _ := sec.Scrub(t)
	return out
}
