package kernel

import (
	"context"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/kernel/audit"
	"github.com/bulwarkmcp/bulwark/kernel/untrusted"
)

// A client on a protocol older than 2026-07-28 is asked over its session:
// the go-sdk's multi-round-trip middleware sends the kernel's input
// requests (the consent question, a handler's AskInput) as real requests
// and calls the tool again with the answers. When an answer does not fit
// the form (the go-sdk checks it against the requested schema), or the
// client answers with an error, the go-sdk fails the whole tools/call with
// a Go error, which reaches the client as a JSON-RPC error of code 0.
// answerMiddleware, just outside it, ends such a call with a tool error
// instead: the consent's is confirmation_declined, saying the answer did
// not fit; nothing ran.

// askedKey is the context key of the *asked of a tools/call.
type askedKey struct{}

// asked is what the last round of a tools/call asked, if anything: set
// when the handler answers with input requests, cleared when it runs
// again with the answers.
type asked struct {
	set bool
	rec audit.Record // the asking round's record
}

// noteAsked records, for answerMiddleware, whether this round asked.
func noteAsked(ctx context.Context, res *mcp.CallToolResult, rec *audit.Record) {
	a, ok := ctx.Value(askedKey{}).(*asked)
	if !ok {
		return
	}
	a.set = res != nil && len(res.InputRequests) > 0
	if a.set {
		a.rec = *rec
	}
}

func (s *Server) answerMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method != "tools/call" {
			return next(ctx, method, req)
		}
		a := &asked{}
		res, err := next(context.WithValue(ctx, askedKey{}, a), method, req)
		if err == nil || !a.set || ctx.Err() != nil || errors.Is(err, context.Canceled) {
			return res, err
		}
		return s.unanswered(ctx, a.rec, err), nil
	}
}

// unanswered is the tool error of a question whose answer did not fit, or
// that the client failed to answer; the audit gets a record of it.
func (s *Server) unanswered(ctx context.Context, asking audit.Record, err error) *mcp.CallToolResult {
	rec := asking
	rec.Time = s.opts.Now()
	rec.Duration, rec.BytesIn = 0, 0
	te := &Error{Code: FailedPrecondition,
		Message: "The client's answer to this tool's question did not fit what was asked (or the client failed to answer), so the call ended; nothing more was done.",
		Hint:    "Answer the form as it asks, or call the tool again."}
	if asking.Confirm == audit.ConfirmAsked {
		te = misfitError()
		rec.Confirm = audit.ConfirmDeclined
	}
	rec.Outcome, rec.ErrorCode, rec.ErrorID = audit.Refused, string(te.Code), ""
	s.logger.InfoContext(ctx, "a question to the client was not answered as asked", "tool", rec.Tool, "code", te.Code,
		"error", untrusted.TerminalLine(clean(err.Error())))
	s.writeCallRecord(ctx, rec) // the call's one record (mrtr.go): this one, not the asking round's
	return s.errorResult(te, "")
}
