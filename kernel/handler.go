package kernel

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"log/slog"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/kernel/audit"
	"github.com/bulwarkmcp/bulwark/kernel/confirm"
	"github.com/bulwarkmcp/bulwark/kernel/identity"
	"github.com/bulwarkmcp/bulwark/kernel/internal/argcheck"
	"github.com/bulwarkmcp/bulwark/kernel/internal/jsonscan"
	"github.com/bulwarkmcp/bulwark/kernel/untrusted"
)

// handler is the tool layer's pipeline for one tool (steps 11 to 17 of
// kernel/doc.go's map): decode and validate, authorization, preview,
// confirmation gate, handler, result shaping, audit. The tier check and
// the rate limit (step 10) ran before, through admitCall, from one of three
// places: the HTTP layer (admission), admitMiddleware on the go-sdk's path,
// or fastResult on the fast paths.
func (s *Server) handler(t *Tool) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		start := s.opts.Now()
		call := s.newCall(ctx, t, req)
		ctx = s.startCall(call.withContext(ctx), t.name) // the call and its meter, one layer (call.go)
		meter := &call.meter
		rec := audit.Record{Time: start, Principal: call.Principal.ID, Plan: call.Principal.Plan,
			Scheme: call.Principal.Scheme, Network: networkFrom(ctx), Tool: t.name, BytesIn: int64(len(req.Params.Arguments))}
		res, rpcErr := s.run(ctx, call, t, req.Params.Arguments, &rec)
		if rpcErr != nil { // a refused requestState (mrtr.go): a protocol error
			rec.Outcome, rec.ErrorCode = audit.Refused, string(CodeInvalidRequestState)
			rec.Duration = s.opts.Now().Sub(start)
			s.writeCallRecord(ctx, rec) // mrtr.go
			noteAsked(ctx, nil, nil)
			return nil, rpcErr
		}
		call.noteRecord(&rec)
		scrubRecord(call.secrets, &rec) // the result's are removed by the egress gate (egress.go)
		noteAsked(ctx, res, &rec)       // mrtr_consent.go
		rec.Duration = s.opts.Now().Sub(start)
		rec.BytesOut = resultSize(res)
		st := meter.Stats()
		rec.UpstreamCalls, rec.UpstreamRetries = int(st.Calls), st.Retries
		rec.UpstreamBytesOut, rec.UpstreamBytesIn = st.BytesOut, st.BytesIn
		s.writeCallRecord(ctx, rec)
		return res, nil
	}
}

func (s *Server) newCall(ctx context.Context, t *Tool, req *mcp.CallToolRequest) *Call {
	c := &Call{Principal: principalFrom(ctx, req), Tool: t.name, server: s, req: req, stream: fastStreamFrom(ctx), scope: s.scopeFor(ctx),
		task: taskCallFrom(ctx)}
	if req.Extra != nil {
		c.header = req.Extra.Header
	}
	c.secrets = s.callSecrets(c)
	return c
}

// principalFrom finds the caller: the HTTP layer's principal, or "local".
func principalFrom(ctx context.Context, req *mcp.CallToolRequest) identity.Principal {
	if p, ok := identity.FromContext(ctx); ok {
		return p
	}
	if req != nil && req.Extra != nil && req.Extra.TokenInfo != nil && req.Extra.TokenInfo.UserID != "" {
		ti := req.Extra.TokenInfo
		plan, _ := ti.Extra["plan"].(string)
		scheme, _ := ti.Extra["scheme"].(string)
		return identity.Principal{ID: ti.UserID, Plan: plan, Scheme: scheme}
	}
	return identity.Local("")
}

// run is steps 11 to 16 for one call. Its error is a protocol error, only
// ever errRequestState; every other failure is a tool error result.
func (s *Server) run(ctx context.Context, call *Call, t *Tool, raw json.RawMessage, rec *audit.Record) (*mcp.CallToolResult, error) {
	if t.taskSupport == TaskRequired && call.task == nil { // tasks.go
		return s.fail(ctx, call, rec, &Error{Code: FailedPrecondition,
			Message: "This tool runs only as a task: call it with params.task (MCP 2025-11-25 tasks); nothing was sent."}), nil
	}
	args, token, err := s.arguments(raw, t.args)
	if err != nil {
		return s.fail(ctx, call, rec, err), nil
	}
	// canon is only hashed, never kept: its buffer goes back to the pool
	// when the call is over (call.canon is cleared first).
	cb := canonBufs.Get().(*[]byte)
	defer func() {
		call.canon = nil
		if cap(*cb) <= maxPooledCanon {
			canonBufs.Put(cb)
		}
	}()
	canon, canonErr := confirm.AppendCanonical((*cb)[:0], args)
	*cb = canon[:0]
	if canonErr == nil {
		rec.ArgsDigest = s.argDigest.sum(canon)
	}
	// the arguments without confirmToken, as json.Marshal writes them
	clean, err := jsonscan.AppendMarshal(make([]byte, 0, len(raw)+32), args)
	if err != nil {
		return s.fail(ctx, call, rec, err), nil
	}
	in, err := t.decode(clean)
	if err != nil {
		return s.fail(ctx, call, rec, Errorf(InvalidArgument, "The arguments do not fit the tool: %s.", describeDecodeError(err))), nil
	}
	// step 12 cannot change args (a target resolver reads them through the
	// read-only Args, the policies only read), so canon, rec.ArgsDigest and
	// in still hold the arguments the gate binds and the handler runs
	if refusal := s.authorize(ctx, call, t, args, rec); refusal != nil {
		return refusal, nil
	}
	if canonErr != nil {
		return s.fail(ctx, call, rec, canonErr), nil
	}
	call.canon = canon
	var sum string // argsSum, computed only for a call that carries a requestState
	if call.req != nil && call.req.Params != nil && call.req.Params.RequestState != "" {
		sum = call.sumArgs()
	}
	if call.state, err = s.openState(ctx, call, sum); err != nil {
		if err == errRequestState {
			return nil, err
		}
		return s.fail(ctx, call, rec, err), nil
	}
	if t.policy.Confirm.applies(args) {
		call.sumArgs() // consent (mrtr_consent.go) binds call.argsSum
		if refusal := s.gate(ctx, call, t, in, args, token, rec); refusal != nil {
			return refusal, nil
		}
	}
	out, err := t.handle(ctx, call, in)
	if err != nil {
		if ask := (*InputRequired)(nil); errors.As(err, &ask) {
			return s.ask(ctx, call, t, ask, rec), nil
		}
		return s.fail(ctx, call, rec, err), nil
	}
	if tc, ok := out.(TaskCreated); ok { // tasks.go
		if call.task == nil {
			return s.fail(ctx, call, rec, fmt.Errorf("tool %s created a task for a call that asked for none", t.name)), nil
		}
		call.task.created = &tc.Task
		rec.Outcome = audit.OK
		return &mcp.CallToolResult{}, nil
	}
	res, err := s.shape(out)
	if err != nil {
		return s.fail(ctx, call, rec, err), nil
	}
	rec.Outcome = audit.OK
	return res, nil
}

// canonBufs holds the buffers the canonical arguments are encoded in; one
// larger than maxPooledCanon is left to the collector.
var canonBufs = sync.Pool{New: func() any { b := make([]byte, 0, 256); return &b }}

const maxPooledCanon = 16 << 10

// argDigester is the audit's keyed hash of the canonical arguments
// (audit.Record.ArgsDigest): HMAC-SHA-256 under a per-process random key,
// the first 16 bytes in hex. Keyed hashes are pooled: building one (two
// SHA-256 states and the padded key) costs more than hashing small
// arguments.
type argDigester struct {
	key  []byte
	pool sync.Pool
}

func newArgDigester() *argDigester {
	d := &argDigester{key: make([]byte, 32)}
	_, _ = rand.Read(d.key) // crypto/rand.Read never fails (it crashes the program instead)
	d.pool.New = func() any { return &keyedHash{h: hmac.New(sha256.New, d.key)} }
	return d
}

// keyedHash is a pooled HMAC with the buffer its sum is written to.
type keyedHash struct {
	h   hash.Hash
	sum [sha256.Size]byte
}

// sum is the digest of canonical arguments.
func (d *argDigester) sum(canon []byte) string {
	m := d.pool.Get().(*keyedHash)
	m.h.Reset()
	m.h.Write(canon)
	var out [32]byte
	hex.Encode(out[:], m.h.Sum(m.sum[:0])[:16])
	d.pool.Put(m)
	return string(out[:])
}

// ask answers a handler's AskInput: the input-required result with the
// handler's state sealed, or an internal error for a tool that did not
// declare AsksInput.
func (s *Server) ask(ctx context.Context, call *Call, t *Tool, ask *InputRequired, rec *audit.Record) *mcp.CallToolResult {
	if !t.asks {
		return s.fail(ctx, call, rec, fmt.Errorf("tool %s asked for input without declaring AsksInput", t.name))
	}
	st := requestState{Kind: stateTool, Args: call.sumArgs(), Data: ask.State}
	if call.consent != "" { // the person accepted this call: later rounds need not ask again
		st.Bind, st.OK = call.consent, true
	}
	res, err := s.inputRequired(ctx, call, ask, st)
	if err != nil {
		return s.fail(ctx, call, rec, err)
	}
	rec.Outcome, rec.ErrorCode = audit.Refused, "input_required"
	return res
}

// arguments decodes and validates the raw arguments with the tool's
// compiled validator, and takes the confirmation token out of them.
func (s *Server) arguments(raw json.RawMessage, check *argcheck.Validator) (map[string]any, string, error) {
	args := map[string]any{}
	if untrusted.HasLoneSurrogate(raw) {
		return nil, "", Errorf(InvalidArgument, "Invalid arguments: a string holds a lone UTF-16 surrogate escape (\\uD800-\\uDFFF without its pair), which is not a character; it would be stored as U+FFFD.").
			WithHint("Send the text as valid Unicode: a character outside the BMP is a high surrogate escape followed by a low one, or the character itself.")
	}
	if len(raw) > 0 && string(raw) != "null" {
		var err error
		if args, err = decodeArguments(raw); err != nil {
			return nil, "", err
		}
	}
	if err := check.ApplyDefaults(args); err != nil {
		return nil, "", fmt.Errorf("applying defaults: %w", err)
	}
	if f := check.Validate(args); f != nil {
		return nil, "", invalidArguments(f)
	}
	token, _ := args[confirmTokenProperty].(string)
	delete(args, confirmTokenProperty)
	return args, token, nil
}

// decodeArguments decodes the arguments as encoding/json does into a map,
// refusing arguments that repeat a key at any depth, as the HTTP layer
// refuses a message that repeats a member: decoding keeps the last value
// while a host may show the person the first, so what was approved would
// not be what runs. One pass (jsonscan.DecodeObject) does both.
func decodeArguments(raw json.RawMessage) (map[string]any, error) {
	args, err := jsonscan.DecodeObject(raw)
	var dup *jsonscan.DuplicateKeyError
	switch {
	case errors.As(err, &dup):
		return nil, Errorf(InvalidArgument, "The arguments repeat the key %.64q.", dup.Key).
			WithHint("Send each key once: a repeated key can be shown one way and read another.")
	case errors.Is(err, jsonscan.ErrNotObject):
		return nil, Errorf(InvalidArgument, "The arguments must be a JSON object.")
	case err != nil:
		return nil, Errorf(InvalidArgument, "The arguments must be a JSON object with UTF-8 keys.")
	}
	return args, nil
}

// gate enforces the confirmation gate. It returns nil when the token
// confirms this exact call, and the refusal to send otherwise.
func (s *Server) gate(ctx context.Context, call *Call, t *Tool, in any, args map[string]any, token string, rec *audit.Record) *mcp.CallToolResult {
	var pv Preview
	if t.preview != nil {
		var err error
		if pv, err = t.preview(ctx, call, in); err != nil {
			return s.fail(ctx, call, rec, err)
		}
		call.preview = &pv
		if pv.NothingToLose {
			return nil
		}
	}
	b, err := binding(call, t, args, pv)
	if err != nil {
		return s.fail(ctx, call, rec, err)
	}
	switch {
	case call.task != nil && s.elicits(call):
		// The person is asked by elicitation within the call's own request,
		// which a task-augmented call answers at once (tasks.go): fail
		// closed rather than fall back to a token the model could redeem.
		return s.fail(ctx, call, rec, &Error{Code: FailedPrecondition,
			Message: "This call needs the person's confirmation, asked by elicitation, which cannot be asked within a task; nothing was sent.",
			Hint:    "Call the tool without task augmentation to be asked."})
	case s.elicits(call):
		return s.consent(ctx, call, t, in, args, pv, b, rec)
	case s.opts.ConfirmBy == ConfirmElicit:
		return s.elicitRequired(ctx, call, rec)
	}
	if token != "" {
		err := s.issuer.Redeem(ctx, b, token)
		if err == nil {
			s.outage.recovered(ctx, s.logger)
			rec.Confirm = audit.ConfirmRedeemed
			return nil
		}
		if !errors.Is(err, confirm.ErrRefused) {
			return s.fail(ctx, call, rec, s.storeFailed(ctx, fmt.Errorf("redeeming a confirmation token: %w", err)))
		}
	}
	fresh, err := s.issuer.Issue(ctx, b)
	if err != nil {
		return s.fail(ctx, call, rec, s.storeFailed(ctx, fmt.Errorf("issuing a confirmation token: %w", err)))
	}
	s.outage.recovered(ctx, s.logger)
	rec.Outcome = audit.Refused
	rec.ErrorCode = string(ConfirmationRequired)
	rec.Confirm = confirmEvent(token != "")
	return s.refusal(call, t, in, pv, fresh, token != "")
}

// storeFailed is the tool error for a confirmation store that failed: the
// gated call fails closed, and says why. The outage is logged once.
func (s *Server) storeFailed(ctx context.Context, err error) *Error {
	s.outage.report(ctx, s.logger, err)
	return &Error{Code: StoreUnavailable, Cause: err,
		Message: "The shared state store is unreachable, so no confirmation can be issued or redeemed; nothing was changed.",
		Hint:    "Try again later. Operator: check the shared store (Redis); service resumes by itself once it answers."}
}

// binding builds what the token confirms from the bound argument fields.
func binding(call *Call, t *Tool, args map[string]any, pv Preview) (confirm.Binding, error) {
	bind := t.policy.Confirm.bind
	b := confirm.Binding{Principal: call.Principal.ID, Tool: t.name, Target: pv.Target}
	if b.Target == "" {
		target, err := confirm.CanonicalValue(pick(args, bind.Target))
		if err != nil {
			return b, err
		}
		b.Target = string(target)
	}
	if len(bind.Payload) > 0 {
		sum, err := confirm.Fingerprint(pick(args, bind.Payload))
		if err != nil {
			return b, err
		}
		b.Payload = sum
	}
	return b, nil
}

func pick(args map[string]any, fields []string) map[string]any {
	m := make(map[string]any, len(fields))
	for _, f := range fields {
		m[f] = args[f] // absent and null alike
	}
	return m
}

// staleTokenHint is the refusal's hint when a token was given and did not
// confirm the call: tokens live in the process that issued them (or its
// shared store), so a client that starts a new server per call never can.
const staleTokenHint = "Tokens live in the server process that issued them (or in the Redis its replicas share): a client that starts a new bulwark process for every call can never confirm. Keep one session for both calls, or serve HTTP."

// refusal is the result that carries a fresh token. It quotes the caller's
// own arguments (through Action) and the preview's counts, nothing else.
func (s *Server) refusal(call *Call, t *Tool, in any, pv Preview, token string, hadToken bool) *mcp.CallToolResult {
	action := "call " + t.name
	if t.action != nil {
		action = t.action(in)
	}
	var b strings.Builder
	if hadToken {
		b.WriteString("The confirmToken given does not confirm this exact call (it is wrong, expired, already used, or was issued for other arguments). ")
	}
	fmt.Fprintf(&b, "Refusing to %s without confirmation.", action)
	switch {
	case pv.Relay != "" && pv.Canonical != "":
		fmt.Fprintf(&b, " It is relayed to the %s, acting on %s.", pv.Relay, pv.Canonical)
	case pv.Relay != "":
		fmt.Fprintf(&b, " It is relayed to the %s.", pv.Relay)
	case pv.Canonical != "":
		fmt.Fprintf(&b, " It acts on %s.", pv.Canonical)
	}
	if pv.Summary != "" {
		b.WriteString(" " + pv.Summary)
	}
	ttl := int(s.issuer.TTL().Seconds())
	fmt.Fprintf(&b, " To proceed, call %s again with the same arguments and confirmToken: %q. The token is valid for %d seconds, works once, and only for exactly these arguments.", t.name, token, ttl)
	msg := clean(b.String())
	errObj := map[string]any{"code": ConfirmationRequired, "message": msg}
	text := msg
	if hadToken {
		errObj["hint"] = staleTokenHint
		text += "\nHint: " + staleTokenHint
	}
	return &mcp.CallToolResult{
		IsError: true,
		Content: []mcp.Content{&mcp.TextContent{Text: text}},
		StructuredContent: map[string]any{
			"error":            errObj,
			"confirmToken":     token,
			"expiresInSeconds": ttl,
		},
	}
}

// fail turns an error into a tool error result and fills the audit record.
func (s *Server) fail(ctx context.Context, call *Call, rec *audit.Record, err error) *mcp.CallToolResult {
	te, internal := asToolError(err)
	rec.ErrorCode = string(te.Code)
	rec.Outcome = audit.ToolError
	var id string
	if internal {
		id = newErrorID()
		rec.Outcome, rec.ErrorID = audit.Internal, id
		s.logger.ErrorContext(ctx, "tool call failed", "error_id", id, "tool", call.Tool, "principal", call.Principal.ID, "error", scrubText(call.secrets, errorText(te)))
	} else if te.Cause != nil {
		// Not our failure: a caller can cause as many as it calls, so never
		// at error level; an upstream's fault is worth an info line.
		level := slog.LevelDebug
		if te.Code == UpstreamError {
			level = slog.LevelInfo
		}
		s.logger.Log(ctx, level, "tool error", "tool", call.Tool, "code", te.Code, "error", scrubText(call.secrets, errorText(te)))
	}
	return s.errorResult(te, id)
}

// errorText is what the log gets: the cause's text, cleaned of invisible
// characters. Callers must not put secrets in errors; handlers wrap
// upstream errors so that tokens never appear in them.
func errorText(te *Error) string {
	if te.Cause != nil {
		return clean(te.Cause.Error())
	}
	return clean(te.Message)
}

func (s *Server) errorResult(te *Error, id string) *mcp.CallToolResult {
	msg, hint := clean(te.Message), clean(te.Hint)
	var b strings.Builder
	fmt.Fprintf(&b, "Error (%s): %s", te.Code, msg)
	if hint != "" {
		b.WriteString("\nHint: " + hint)
	}
	if id != "" {
		b.WriteString("\nError id: " + id)
	}
	errObj := map[string]any{"code": te.Code, "message": msg}
	if hint != "" {
		errObj["hint"] = hint
	}
	if id != "" {
		errObj["id"] = id
	}
	if te.Upstream != "" {
		text, rep := s.envelope.Text(te.Upstream)
		b.WriteString("\nThe upstream said:\n")
		b.WriteString(s.envelope.Wrap(text, rep))
	}
	return &mcp.CallToolResult{
		IsError:           true,
		Content:           []mcp.Content{&mcp.TextContent{Text: b.String()}},
		StructuredContent: map[string]any{"error": errObj},
	}
}

// shape turns a handler's value into the result: enveloped text content
// and, for JSON objects, the same sanitized data as structured content.
func (s *Server) shape(out any) (*mcp.CallToolResult, error) {
	if c, ok := out.(Content); ok {
		return s.shapeContent(c)
	}
	meta := mcp.Meta{"bulwark/untrusted": untrustedMeta(s.envelope.Source)}
	if txt, ok := isText(out); ok {
		text, rep := s.envelope.Text(string(txt))
		return textResult(meta, s.envelope.Wrap(text, rep)), nil // content.go
	}
	raw, ok := out.(json.RawMessage)
	if !ok {
		var err error
		if raw, err = json.Marshal(out); err != nil {
			return nil, fmt.Errorf("encoding the result: %w", err)
		}
	}
	data, rep, err := s.envelope.JSON(raw)
	if err != nil {
		return nil, fmt.Errorf("sanitizing the result: %w", err)
	}
	res := textResult(meta, s.envelope.WrapBytes(data, rep))
	if len(data) > 0 && data[0] == '{' {
		res.StructuredContent = json.RawMessage(data)
	}
	return res, nil
}

// sourceMetas holds, by envelope source, the {"source": S} value of the
// results' _meta "bulwark/untrusted" member: built once and shared by every
// result, like the server's Implementation the go-sdk puts in each result's
// _meta. Nothing writes into it (the go-sdk adds its members to the
// result's own _meta map, which stays per result). Sources come from the
// configuration, so the map stays as small as the number of servers.
var sourceMetas sync.Map

func untrustedMeta(source string) map[string]any {
	if m, ok := sourceMetas.Load(source); ok {
		return m.(map[string]any)
	}
	m, _ := sourceMetas.LoadOrStore(source, map[string]any{"source": source})
	return m.(map[string]any)
}

func resultSize(res *mcp.CallToolResult) int64 {
	var n int
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			n += len(tc.Text)
		}
	}
	return int64(n)
}

// clean cleans our own messages too: they may quote the caller's arguments.
func clean(s string) string { return untrusted.CleanString(s) }
