package kernel

import (
	"context"
	"encoding/json"
	"log/slog"
	"maps"
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/kernel/audit"
	"github.com/bulwarkmcp/bulwark/kernel/authz"
	"github.com/bulwarkmcp/bulwark/kernel/egress"
	"github.com/bulwarkmcp/bulwark/kernel/httpguard"
	"github.com/bulwarkmcp/bulwark/kernel/identity"
	"github.com/bulwarkmcp/bulwark/kernel/untrusted"
	"github.com/bulwarkmcp/bulwark/kernel/upstream"
)

// Call is what a handler knows about the call it serves, beside its
// arguments: who is calling, how to report progress and log, and the
// request's own credentials.
type Call struct {
	// Principal is the authenticated caller ("local" over stdio).
	Principal identity.Principal
	// Tool is the tool's name.
	Tool string

	server   *Server
	req      *mcp.CallToolRequest
	stream   *fastStream // the fast path's stream of this call (fastpath_stream.go); nil on the go-sdk's path
	header   http.Header
	preview  *Preview
	secrets  *egress.Secrets // the secrets in play (egress.go): never in a log line or audit record
	scope    *egressScope    // the transport's egress scope, where RegisterSecrets adds
	authzReq *authz.Request  // step 12's question, for Permits
	state    *requestState   // the verified requestState of this round (mrtr.go)
	argsSum  string          // hex SHA-256 of the canonical arguments (mrtr.go): read it through sumArgs
	canon    []byte          // the canonical arguments while the tool layer runs, for sumArgs
	consent  string          // hex binding digest the person accepted (mrtr_consent.go)
	notes    callNotes       // for the audit record: CacheHit, SetAuditAttr
	task     *taskCall       // a task-augmented call's (tasks.go)

	authzBuf authz.Request  // where authzReq points: step 12 allocates nothing of its own
	meter    upstream.Meter // the call's upstream traffic, for the audit record
	ctx      callContext    // the handler's context (withContext): this Call and its meter
}

// Preview returns what the tool's Preview reported for this call, when the
// call went through a confirmation gate.
func (c *Call) Preview() (Preview, bool) {
	if c.preview == nil {
		return Preview{}, false
	}
	return *c.preview, true
}

// sumArgs returns argsSum, computing it on first use from the canonical
// arguments: most calls never need it (no requestState, no consent, no
// AskInput), and it costs a SHA-256. The tool layer calls it before every
// step that reads argsSum (openState, the confirmation gate, ask).
func (c *Call) sumArgs() string {
	if c.argsSum == "" && c.canon != nil {
		c.argsSum = argsSum(c.canon)
	}
	return c.argsSum
}

type callKey struct{}

// callContext is a call's context: its parent with, as values, the Call
// (CallFrom) and the Call's upstream Meter (upstream.MeterFrom), in one
// layer held in the Call itself, where two context.WithValue layers and a
// Meter were three allocations per call. Every other key, and the
// deadline, cancellation and error, are the parent's.
type callContext struct {
	context.Context
	call *Call
}

func (c *callContext) Value(key any) any {
	if _, ok := key.(callKey); ok {
		return c.call
	}
	if upstream.IsMeterKey(key) {
		return &c.call.meter
	}
	return c.Context.Value(key)
}

// withContext returns the context the call's handler runs in: parent
// carrying the call and its meter.
func (c *Call) withContext(parent context.Context) context.Context {
	c.ctx = callContext{Context: parent, call: c}
	return &c.ctx
}

// CallFrom returns the Call a handler's context belongs to, for code below
// the handler that needs it (a provider client asking for the request's
// credential). It returns nil outside a tool call.
func CallFrom(ctx context.Context) *Call {
	c, _ := ctx.Value(callKey{}).(*Call)
	return c
}

// Header returns a copy of the HTTP request's headers without the
// declared credential headers (nil over stdio). Handlers should not need
// it: credentials come through Credential.
func (c *Call) Header() http.Header { return c.server.withoutCredentials(c.header) }

// Credential returns the value of a provider credential declared in the
// server's Options.Credentials: over HTTP with BYOK, from this request's own
// header; otherwise from the configuration. It fails closed with a tool
// error (unauthenticated) "Missing <provider> credentials" when there is
// none, and "Malformed <provider> credentials" when the header is sent more
// than once or is not 1 to 8192 printable ASCII characters (one token, or
// a scheme, one space and a token).
func (c *Call) Credential(name string) (string, error) {
	return c.server.credential(c, name)
}

// Progress reports progress on a long operation when the client asked for it
// (it sent a progress token); otherwise it does nothing. The message is
// cleaned like any upstream text.
func (c *Call) Progress(ctx context.Context, done, total float64, message string) {
	st, tok := c.progressTo()
	if tok == nil {
		return
	}
	p := &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: done, Total: total,
		Message: untrusted.CleanString(message)} // the egress gate scrubs it
	if st != nil { // the fast path's stream (fastpath_stream.go)
		st.progress(p)
		return
	}
	_ = c.req.Session.NotifyProgress(c.sessionContext(ctx), p)
}

// sessionContext is the context a notification of this call goes out with
// on the go-sdk's session path: the call's own (the go-sdk finds the
// request's response stream from it: over stateless Streamable HTTP a
// notification sent with another context, such as the gateway's relay of
// its upstream's progress, was dropped), or ctx outside a handler.
func (c *Call) sessionContext(ctx context.Context) context.Context {
	if c.ctx.Context == nil {
		return ctx
	}
	return &c.ctx
}

// WantsProgress reports whether Progress would reach the client: it sent a
// progress token with this call. A relay (the gateway) asks its upstream for
// progress only then.
func (c *Call) WantsProgress(ctx context.Context) bool {
	_, tok := c.progressTo()
	return tok != nil
}

// LogLevel is the level at and above which Log reaches the client on this
// call, when the kernel knows it (known): a 2026-07-28 request's own, from
// its _meta ("" when it names none: Log then reaches no client), on the
// fast path and on the go-sdk's; "info" for a legacy request the fast path
// streams; "" for a call that has no way to the client. A level name MCP
// does not have counts as "debug", as Log's filter reads it. For a legacy
// request on the go-sdk's session the session's level (logging/setLevel)
// decides: known is false. A relay (the gateway) asks its upstream for log
// messages at this level only, as it asks for progress only when
// WantsProgress.
func (c *Call) LogLevel(ctx context.Context) (level mcp.LoggingLevel, known bool) {
	if st := c.stream; st != nil {
		return knownLevel(st.level), true
	}
	if c.req == nil || c.req.Session == nil {
		return "", true
	}
	if c.req.Params != nil { // the go-sdk's rule (SEP-2575): a 2026-07-28 request's level is its _meta's
		meta := c.req.Params.Meta
		if v, _ := meta[mcp.MetaKeyProtocolVersion].(string); httpguard.IsModernVersion(v) {
			l, _ := meta[mcp.MetaKeyLogLevel].(string)
			return knownLevel(l), true
		}
	}
	return "", false
}

// knownLevel is a client's log level as Log's filter reads it: "" for
// none, a name MCP does not have as "debug".
func knownLevel(l string) mcp.LoggingLevel {
	if l == "" {
		return ""
	}
	if _, ok := logLevels[mcp.LoggingLevel(l)]; !ok {
		return "debug"
	}
	return mcp.LoggingLevel(l)
}

// progressTo is where this call's progress goes: the client's progress
// token (nil when it asked for none), and the fast path's stream when the
// call is answered there (nil on the go-sdk path, where the session sends).
func (c *Call) progressTo() (*fastStream, any) {
	if st := c.stream; st != nil {
		return st, st.token
	}
	if c.req == nil || c.req.Params == nil || c.req.Session == nil {
		return nil, nil
	}
	return nil, c.req.Params.GetProgressToken()
}

// Log sends a log notification to the client (at the level it chose) and to
// the server's logger. data passes through the untrusted envelope's
// sanitizer: redacted, cut and cleaned like a result.
func (c *Call) Log(ctx context.Context, level slog.Level, message string, data any) {
	message = untrusted.CleanString(message)
	clean := c.server.sanitizeLogData(data) // what the client gets is gated (egress.go)
	c.server.logger.Log(ctx, level, scrubText(c.secrets, message), "tool", c.Tool, "principal", c.Principal.ID)
	params := &mcp.LoggingMessageParams{
		Level:  mcpLevel(level),
		Logger: c.server.name,
		Data:   map[string]any{"message": message, "data": clean},
	}
	if st := c.stream; st != nil { // the fast path's stream (fastpath_stream.go)
		st.log(params)
		return
	}
	if c.req == nil || c.req.Session == nil {
		return
	}
	_ = c.req.Session.Log(c.sessionContext(ctx), params)
}

func mcpLevel(l slog.Level) mcp.LoggingLevel {
	switch {
	case l >= slog.LevelError:
		return "error"
	case l >= slog.LevelWarn:
		return "warning"
	case l >= slog.LevelInfo:
		return "info"
	}
	return "debug"
}

// sanitizeLogData runs data through the envelope's JSON sanitizer.
func (s *Server) sanitizeLogData(data any) json.RawMessage {
	if data == nil {
		return nil
	}
	raw, err := json.Marshal(data)
	if err != nil {
		return json.RawMessage(`"[unencodable]"`)
	}
	clean, _, err := s.envelope.JSON(raw)
	if err != nil {
		return json.RawMessage(`"[unencodable]"`)
	}
	return clean
}

// callNotes is what a handler tells the kernel for the call's audit record.
type callNotes struct {
	mu        sync.Mutex
	cacheHits int
	attrs     map[string]string
}

// CacheHit notes, for the call's audit record (audit.Record.CacheHits),
// that the server answered a request from its own cache instead of the
// upstream. It is safe for concurrent use.
func (c *Call) CacheHit() {
	c.notes.mu.Lock()
	c.notes.cacheHits++
	c.notes.mu.Unlock()
}

// SetAuditAttr sets a server-specific attribute of the call's audit record
// (audit.Record.Attrs), such as the status of an enrichment step. Keys and
// values come from fixed vocabularies: never an argument's value, a
// credential or an id. A key or value longer than audit.MaxAttrLen bytes, or
// a new key past audit.MaxAttrs, is dropped; values are scrubbed of the
// credentials in play like the rest of the record. It is safe for
// concurrent use.
func (c *Call) SetAuditAttr(key, value string) {
	if key == "" || len(key) > audit.MaxAttrLen || len(value) > audit.MaxAttrLen {
		return
	}
	c.notes.mu.Lock()
	defer c.notes.mu.Unlock()
	if _, ok := c.notes.attrs[key]; !ok && len(c.notes.attrs) >= audit.MaxAttrs {
		return
	}
	if c.notes.attrs == nil {
		c.notes.attrs = map[string]string{}
	}
	c.notes.attrs[key] = value
}

// noteRecord copies the handler's notes into rec.
func (c *Call) noteRecord(rec *audit.Record) {
	c.notes.mu.Lock()
	defer c.notes.mu.Unlock()
	rec.CacheHits = c.notes.cacheHits
	if len(c.notes.attrs) > 0 {
		rec.Attrs = maps.Clone(c.notes.attrs)
	}
}

// StoreUnavailable is the tool error of a call that state in the shared
// store decides (a server's own: a sign-in grant, a stored key) when the
// store failed: the call fails closed with store_unavailable, as the
// kernel's own confirmations and limits do, and the outage is logged once
// in the kernel's log. err is the store's error; it is never shown.
func (c *Call) StoreUnavailable(err error) *Error {
	if c.server != nil {
		c.server.outage.report(context.Background(), c.server.logger, err)
	}
	return &Error{Code: StoreUnavailable, Cause: err,
		Message: "The shared state store is unreachable, so this call cannot be decided; nothing was changed.",
		Hint:    "Try again later. Operator: check the shared store (Redis); service resumes by itself once it answers."}
}
