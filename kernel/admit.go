package kernel

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/kernel/audit"
	"github.com/bulwarkmcp/bulwark/kernel/httpguard"
	"github.com/bulwarkmcp/bulwark/kernel/identity"
	"github.com/bulwarkmcp/bulwark/kernel/internal/reqscope"
	"github.com/bulwarkmcp/bulwark/kernel/ratelimit"
)

type admissionKey struct{}

// StoreOutage decides what the server does while the shared store that
// keeps rate-limit windows and confirmation tokens cannot be reached. The
// zero value refuses every call that needs it (fail closed).
type StoreOutage struct {
	// ServeReads lets read-only tools go on, each process counting them
	// against the limit on its own (ratelimit.Limiter.AllowLocal), so N
	// replicas admit up to N times the limit. Write tools and confirmations
	// still fail closed.
	ServeReads bool
	// Setting names the operator setting that sets ServeReads (a flag such
	// as "--store-outage"); refusals name it. Empty: not named.
	Setting string
}

// admission is pipeline step 10 for one tools/call: the tier check, then
// the rate limit. It is decided once per call — by the HTTP layer, which
// passes it on in the context, or by admitMiddleware on stdio.
type admission struct {
	// tool is the tool it was decided for.
	tool string
	// tierRefused is set when the principal's plan may not call the tool;
	// no rate-limit slot was spent.
	tierRefused bool
	// refusal is the JSON-RPC error of a call refused by the limit or by a
	// store outage, and status its HTTP status (429 or 503).
	refusal *ratelimit.Error
	status  int
	// decision is the limiter's decision (for Retry-After).
	decision ratelimit.Decision
}

// httpScope is what the HTTP layer's admission records for one request, in
// its reqscope.Scope: the client's network for the audit, and the call's
// admission when it was decided there.
type httpScope struct {
	network   string
	admission admission
	admitted  bool
}

func httpScopeFrom(ctx context.Context) *httpScope {
	if sc := reqscope.From(ctx); sc != nil {
		hs, _ := sc.Kernel.(*httpScope)
		return hs
	}
	return nil
}

func withAdmission(ctx context.Context, a admission) context.Context {
	return context.WithValue(ctx, admissionKey{}, a)
}

// admissionFrom returns the admission decided for tool: by withAdmission, or
// by the HTTP layer (httpScope).
func admissionFrom(ctx context.Context, tool string) (admission, bool) {
	if hs := httpScopeFrom(ctx); hs != nil && hs.admitted {
		return hs.admission, hs.admission.tool == tool
	}
	a, ok := ctx.Value(admissionKey{}).(admission)
	return a, ok && a.tool == tool
}

// networkFrom is the client's network, as the HTTP layer recorded it
// (httpScope); "" over stdio.
func networkFrom(ctx context.Context) string {
	if hs := httpScopeFrom(ctx); hs != nil {
		return hs.network
	}
	return ""
}

// admit decides the tier check, then the rate limit, for a call of tool by
// p. An unknown tool is admitted (the SDK answers it). A limiter whose store
// fails refuses as store_unavailable (fail closed), unless the operator
// chose to serve read-only tools under a per-process limit.
func (s *Server) admit(ctx context.Context, p identity.Principal, tool string) admission {
	a := admission{tool: tool}
	t, known := s.lookup(tool)
	if known && !s.opts.Tiers.Allows(p.Plan, t.policy.tier()) {
		a.tierRefused = true
		return a
	}
	return s.limit(ctx, p, a, known && t.policy.ReadOnly == Yes)
}

// admitTask is step 10 for a tasks/* request (tasks.go): the principal's
// rate limit, the one a call spends. No tier check: the task's tool was
// checked when its call created the task. Under a store outage with
// StoreOutage.ServeReads, tasks/get, tasks/result and tasks/list go on as
// reads; tasks/cancel changes an upstream's state and fails closed.
func (s *Server) admitTask(ctx context.Context, p identity.Principal, method string) admission {
	return s.limit(ctx, p, admission{tool: method}, method != "tasks/cancel")
}

// limit decides the rate limit of a for p; readOnly lets it go on under a
// store outage when the operator chose to serve reads.
func (s *Server) limit(ctx context.Context, p identity.Principal, a admission, readOnly bool) admission {
	if s.opts.Limiter == nil {
		return a
	}
	d, err := s.opts.Limiter.Allow(ctx, p.ID)
	switch {
	case errors.Is(err, ratelimit.ErrStoreUnavailable):
		s.outage.report(ctx, s.logger, err)
		if !s.opts.StoreOutage.ServeReads || !readOnly {
			a.refusal, a.status = ratelimit.Unavailable(s.opts.StoreOutage.Setting), http.StatusServiceUnavailable
			return a
		}
		d, err = s.opts.Limiter.AllowLocal(ctx, p.ID)
	case err == nil:
		s.outage.recovered(ctx, s.logger)
	}
	if err != nil {
		s.logger.ErrorContext(ctx, "rate limiter failed; refusing", "error", err.Error())
	}
	a.decision = d
	if err != nil || !d.Allowed {
		a.refusal, a.status = ratelimit.Refusal(d), http.StatusTooManyRequests
	}
	return a
}

// admitMiddleware answers step 10 for tools/call on the go-sdk's path (every
// transport); the kernel's fast path calls the same admitCall.
func (s *Server) admitMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		ctr, ok := req.(*mcp.CallToolRequest)
		if method != "tools/call" || !ok {
			return next(ctx, method, req)
		}
		res, err, answered := s.admitCall(ctx, ctr)
		switch {
		case err != nil:
			return nil, err
		case answered:
			return res, nil
		}
		return next(ctx, method, req)
	}
}

// admitCall takes the HTTP layer's admission from the context, or decides
// it here (stdio, in-process). A tier refusal is a tool error; a limit or
// outage refusal is the JSON-RPC error the HTTP layer sends with 429 or 503.
// answered is false when the call may go on to the tool layer.
func (s *Server) admitCall(ctx context.Context, ctr *mcp.CallToolRequest) (res *mcp.CallToolResult, err error, answered bool) {
	p := principalFrom(ctx, ctr)
	a, decided := admissionFrom(ctx, ctr.Params.Name)
	if !decided {
		a = s.admit(ctx, p, ctr.Params.Name)
	}
	switch {
	case a.tierRefused:
		return s.tierRefusal(ctx, p, ctr.Params.Name), nil, true
	case a.refusal != nil:
		s.audit.Write(ctx, s.refusalRecord(p, ctr.Params.Name, networkFrom(ctx), a))
		return nil, (*jsonrpc.Error)(a.refusal), true
	}
	return nil, nil, false
}

// tierRefusal is the tool error for a plan below the tool's tier.
func (s *Server) tierRefusal(ctx context.Context, p identity.Principal, tool string) *mcp.CallToolResult {
	s.audit.Write(ctx, audit.Record{Time: s.opts.Now(), Principal: p.ID, Plan: p.Plan, Scheme: p.Scheme,
		Network: networkFrom(ctx), Tool: tool, Outcome: audit.Refused, ErrorCode: string(PermissionDenied)})
	return s.errorResult(&Error{Code: PermissionDenied, Message: "Your plan does not include this tool.",
		Hint: "Ask the operator for a plan that includes it."}, "")
}

// writeRefusal answers over HTTP a request refused at admission (a.refusal
// set): 429 with Retry-After, or 503, with the JSON-RPC error stdio sends.
func writeRefusal(w http.ResponseWriter, id json.RawMessage, a admission) {
	if a.status == http.StatusTooManyRequests {
		w.Header().Set("Retry-After", ratelimit.RetryAfterHeader(a.decision))
	}
	httpguard.WriteError(w, a.status, id, int(a.refusal.Code), a.refusal.Message, a.refusal.Data)
}

// refusalRecord is the audit record of a call refused at admission. Its
// arguments were never read, so it carries no argument digest.
func (s *Server) refusalRecord(p identity.Principal, tool, network string, a admission) audit.Record {
	rec := audit.Record{Time: s.opts.Now(), Principal: p.ID, Plan: p.Plan, Scheme: p.Scheme, Network: network,
		Tool: tool, Outcome: audit.RateLimited, ErrorCode: string(RateLimited)}
	if a.status == http.StatusServiceUnavailable {
		rec.Outcome, rec.ErrorCode = audit.Refused, string(StoreUnavailable)
	}
	return rec
}

// outage logs a shared-store outage once when it starts and once when it
// ends, never once per call.
type outage struct{ down atomic.Bool }

func (o *outage) report(ctx context.Context, logger *slog.Logger, err error) {
	if !o.down.Load() && o.down.CompareAndSwap(false, true) {
		logger.ErrorContext(ctx, "shared store unreachable: refusing the calls that need it until it answers", "error", err.Error())
	}
}

func (o *outage) recovered(ctx context.Context, logger *slog.Logger) {
	if o.down.Load() && o.down.CompareAndSwap(true, false) {
		logger.InfoContext(ctx, "shared store answers again: service resumed")
	}
}
