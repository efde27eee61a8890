package gateway

// A relayed tools/call: the relayed tool's handler checks the tool's pin,
// canonicalizes the arguments and sends them upstream with the call's
// progress token and log level (call), directly on a stdio child's
// connection (rawcall.go) or through the go-sdk's session (relay.go);
// a gated call's confirmation is bound to what will be sent (preview).

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/confirm"
)

// preview binds a gated call's token to the upstream, the tool, its pin
// hash, the target and every argument, the target in its canonical form
// (target.go) as the upstream will receive it: a token issued before the
// tool's definition changed cannot confirm a call after, and the summary
// the person or the model reads names what the call acts on, not the
// caller's spelling of it.
func (g *Gateway) preview(l *link, exposed, name string, args json.RawMessage) (kernel.Preview, error) {
	_, hash, err := g.checkPin(l, exposed, name)
	if err != nil {
		return kernel.Preview{}, err
	}
	var m map[string]any
	if err := json.Unmarshal(args, &m); err != nil {
		return kernel.Preview{}, err
	}
	targets, canon, err := l.relayedTargets(name, fromMap(m))
	if err != nil {
		return kernel.Preview{}, err
	}
	bound := make([]any, len(targets))
	for i, t := range targets {
		bound[i] = []any{t.arg, t.value}
	}
	for arg, v := range canon {
		m[arg] = v // the arguments as the upstream receives them
	}
	sum, err := confirm.Fingerprint(m)
	if err != nil {
		return kernel.Preview{}, err
	}
	key, err := confirm.CanonicalValue(map[string]any{"upstream": l.u.Name, "tool": name, "pin": hash,
		"targets": bound, "arguments": hex.EncodeToString(sum[:])})
	if err != nil {
		return kernel.Preview{}, err
	}
	pv := kernel.Preview{Target: string(key), Data: hash, Arguments: m,
		Relay: fmt.Sprintf("MCP server %q as its tool %q", l.u.Name, name)}
	if len(targets) > 0 {
		pv.Canonical = summary(targets)
	}
	return pv, nil
}

// notifyGrace is how long after its result a call still receives the
// upstream's progress and log notifications that preceded the result.
const notifyGrace = 250 * time.Millisecond

// modern reports whether a session speaks 2026-07-28 or later, where a
// request asks for log messages in its _meta.
func modern(sess *mcp.ClientSession) bool {
	r := sess.InitializeResult()
	return r != nil && r.ProtocolVersion >= "2026-07-28"
}

// relayParams are what a relayed call sends: the upstream's tool name, the
// validated arguments, and the call's token when the client asked for its
// progress; logLevel, when not "", asks for log messages at that level in
// the request's _meta (2026-07-28).
type relayParams struct {
	name, tok string
	args      json.RawMessage
	progress  bool
	logLevel  mcp.LoggingLevel
}

// progressTokenKey is the _meta member of a request's progress token (the
// go-sdk's SetProgressToken writes it; TestRelayParams holds the two equal).
const progressTokenKey = "progressToken"

// params builds the tools/call params. It writes the progress token
// itself, not through SetProgressToken, whose pointer made the params
// escape (an allocation per call); a call that asks for neither progress
// nor log messages has no _meta.
func (rp *relayParams) params() mcp.CallToolParams {
	p := mcp.CallToolParams{Name: rp.name, Arguments: rp.args}
	switch {
	case rp.progress:
		p.Meta = mcp.Meta{progressTokenKey: rp.tok}
		if rp.logLevel != "" {
			p.Meta[mcp.MetaKeyLogLevel] = string(rp.logLevel) // relayed sanitized
		}
	case rp.logLevel != "":
		p.Meta = mcp.Meta{mcp.MetaKeyLogLevel: string(rp.logLevel)}
	}
	return p
}

// upstreamLogLevel is the log level a relayed call asks its upstream for in
// its _meta: on a 2026-07-28 upstream session the client's own for this
// call (kernel.Call.LogLevel; none when it asked for none, so an upstream
// is not asked for messages that would reach no client), or "info" where
// the go-sdk's session holds the client's level; "" on an earlier session,
// asked once at connect (link.go).
func upstreamLogLevel(ctx context.Context, call *kernel.Call, sess *mcp.ClientSession) mcp.LoggingLevel {
	if !modern(sess) {
		return ""
	}
	if level, known := call.LogLevel(ctx); known {
		return level
	}
	return "info"
}

// call relays one validated call.
func (g *Gateway) call(ctx context.Context, l *link, call *kernel.Call, exposed, name string, args json.RawMessage) (any, error) {
	sess, hash, err := g.checkPin(l, exposed, name)
	if err != nil {
		return nil, err
	}
	if pv, ok := call.Preview(); ok && pv.Data != hash {
		return nil, &kernel.Error{Code: kernel.FailedPrecondition,
			Message: fmt.Sprintf("The definition of %q changed while the call was being confirmed; nothing was sent.", exposed),
			Hint:    "Call the tool again to get a token for its current definition."}
	}
	if args, err = l.canonicalArgs(name, args); err != nil {
		return nil, err
	}
	if tp, ok := call.Task(); ok { // tasks.go
		return g.startTask(ctx, l, sess, call, exposed, name, args, tp)
	}
	timeout := l.u.callTimeout(g.cfg.CallTimeout)
	key := tokKey{n: l.nextTok.Add(1)}
	l.calls.store(key, call) // for its progress, and its logs (onLog)
	l.inCalls.Add(1)
	// The client library may run notification handlers after it delivers
	// the result they preceded: keep the call known a moment longer.
	defer l.grace.after(notifyGrace, graceEnd{key: key, counted: true})
	rp := relayParams{name: name, args: args,
		progress: call.WantsProgress(ctx),           // otherwise its progress would go nowhere
		logLevel: upstreamLogLevel(ctx, call, sess)} // likewise its log messages
	if rp.progress {
		rp.tok = key.String()
	}
	asked := l.refusedAsks.Load()
	res, err := g.callTool(ctx, l, call, sess, &rp, timeout)
	if err == nil {
		err = l.askRefused(asked) // asks.go
	}
	if err == nil {
		return g.result(l, name, res)
	}
	if passes(err) { // relay.go: a question for the client, or its refusal
		return nil, err
	}
	return nil, g.callError(ctx, l, name, timeout, err)
}

// callError is the tool error for a relayed call's failure.
func (g *Gateway) callError(ctx context.Context, l *link, name string, timeout time.Duration, err error) error {
	var bad badResult
	var hf httpFailure
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case errors.Is(err, errCallTimeout):
		return &kernel.Error{Code: kernel.Timeout, Cause: err,
			Message: fmt.Sprintf("The upstream %q did not answer %q within %s; the call was cancelled.", l.u.Name, name, timeout),
			Hint:    "It may be hung or overloaded; the call may or may not have taken effect there."}
	case errors.As(err, &bad): // the session goes on
		return &kernel.Error{Code: kernel.UpstreamError, Cause: errors.New(g.scrub.text(err.Error())),
			Message: fmt.Sprintf("The upstream %q answered %q with a result that is not valid MCP (such as a content block of a type MCP does not define); the gateway relays none of it.", l.u.Name, name),
			Hint:    "The upstream is still running; the call may or may not have taken effect there. This is the upstream server's fault, not the call's."}
	case errors.As(err, &hf): // a task request's answer over HTTP (httptask.go)
		return &kernel.Error{Code: kernel.UpstreamError, Cause: errors.New(g.scrub.text(err.Error())),
			Message: fmt.Sprintf("The upstream %q answered a request for %q with something that is not its answer (%s); the gateway relays none of it.", l.u.Name, name, g.scrub.text(hf.Error())),
			Hint:    "The call may or may not have taken effect there. This is the upstream server's fault, not the call's."}
	case errors.Is(err, errLineTooLong):
		return &kernel.Error{Code: kernel.UpstreamUnavailable, Cause: err,
			Message: fmt.Sprintf("The upstream %q sent a message over the %d-byte frame cap (twice max_result_bytes plus 64 KiB) during the call to %q; the gateway closed the connection and is restarting it.", l.u.Name, maxLine(l.u), name),
			Hint:    "The call may or may not have taken effect there. Raise max_result_bytes if such answers are expected."}
	default:
		return &kernel.Error{Code: kernel.UpstreamUnavailable, Cause: errors.New(g.scrub.text(err.Error())),
			Message: fmt.Sprintf("The connection to the upstream %q failed during the call to %q (it crashed, closed, or sent a message over the %d-byte frame cap); the gateway is restarting it.", l.u.Name, name, maxLine(l.u)),
			Hint:    "The call may or may not have taken effect there. Try again in a few seconds."}
	}
}

// passes reports whether a callTool error is already the tool's answer.
func passes(err error) bool {
	var ir *kernel.InputRequired
	var ke *kernel.Error
	return errors.As(err, &ir) || errors.As(err, &ke)
}

// callTool makes the upstream call: directly, or for a relaying upstream as
// a flight that may park; a retry that carries the state of a parked flight
// answers its question and resumes it.
func (g *Gateway) callTool(ctx context.Context, l *link, call *kernel.Call, sess *mcp.ClientSession, rp *relayParams, timeout time.Duration) (*mcp.CallToolResult, error) {
	if c := l.rawConn(sess); c != nil && !l.u.relays() && call.State() == nil {
		p := rp.params()
		res, err := rawCallTool(ctx, c, &p, timeout) // its own timer, no context
		return res, g.notRelayed(l, err)
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	p := rp.params()
	res, err := g.callToolSDK(cctx, l, call, sess, &p)
	if err != nil && cctx.Err() == context.DeadlineExceeded && ctx.Err() == nil {
		err = timedOut{err}
	}
	return res, err
}

// timedOut is an error that came once the call's time limit passed: it is
// errCallTimeout, and still what it was (a relayed question's refusal
// stays one).
type timedOut struct{ err error }

func (e timedOut) Error() string        { return e.err.Error() }
func (e timedOut) Unwrap() error        { return e.err }
func (e timedOut) Is(target error) bool { return target == errCallTimeout }
