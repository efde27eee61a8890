package kernel

import (
	"time"

	"context"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/kernel/audit"
	"github.com/bulwarkmcp/bulwark/kernel/identity"
	"github.com/bulwarkmcp/bulwark/kernel/ratelimit"
)

type admittedKey struct{}
type networkKey struct{}

// withAdmitted marks a request whose tier and rate limit the HTTP layer has
// already decided, so the tool layer does not count it twice.
func withAdmitted(ctx context.Context) context.Context {
	return context.WithValue(ctx, admittedKey{}, true)
}

func admitted(ctx context.Context) bool { v, _ := ctx.Value(admittedKey{}).(bool); return v }

// withNetwork records the client's network for the audit.
func withNetwork(ctx context.Context, network string) context.Context {
	return context.WithValue(ctx, networkKey{}, network)
}

func networkFrom(ctx context.Context) string { v, _ := ctx.Value(networkKey{}).(string); return v }

// Admission is the tier and rate-limit decision for one tools/call.
type Admission struct {
	// TierAllowed is false when the principal's plan may not call the tool;
	// the call then goes on to the tool layer, which answers with a
	// permission_denied tool error, and spends no rate-limit slot.
	TierAllowed bool
	// Limited is set when the rate limit refuses the call.
	Limited *ratelimit.Error
	// Decision is the limiter's decision (for Retry-After).
	Decision ratelimit.Decision
}

// Admit decides the tier check, then the rate limit, for a call of tool by
// p. An unknown tool is admitted (the SDK answers it). A limiter whose store
// fails refuses (fail closed) and returns the error.
func (s *Server) Admit(ctx context.Context, p identity.Principal, tool string) (Admission, error) {
	t, ok := s.byName[tool]
	if ok && !s.opts.Tiers.Allows(p.Plan, t.policy.tier()) {
		return Admission{TierAllowed: false}, nil
	}
	a := Admission{TierAllowed: true}
	if s.opts.Limiter == nil {
		return a, nil
	}
	d, err := s.opts.Limiter.Allow(ctx, p.ID)
	a.Decision = d
	if err != nil || !d.Allowed {
		a.Limited = ratelimit.Refusal(d)
	}
	return a, err
}

// admitMiddleware runs the tier check and the rate limit for tools/call
// requests that the HTTP layer did not already decide (stdio, in-process).
func (s *Server) admitMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		ctr, ok := req.(*mcp.CallToolRequest)
		if method != "tools/call" || !ok {
			return next(ctx, method, req)
		}
		p := principalFrom(ctx, ctr)
		if t, ok := s.byName[ctr.Params.Name]; ok && !s.opts.Tiers.Allows(p.Plan, t.policy.tier()) {
			return s.tierRefusal(ctx, p, ctr.Params.Name), nil
		}
		if admitted(ctx) {
			return next(ctx, method, req)
		}
		a, err := s.Admit(ctx, p, ctr.Params.Name)
		if err != nil {
			s.logger.ErrorContext(ctx, "rate limiter failed; refusing", "error", err.Error())
		}
		if a.Limited != nil {
			s.audit.Write(ctx, audit.Record{Time: s.opts.Now(), Principal: p.ID, Plan: p.Plan, Scheme: p.Scheme,
				Tool: ctr.Params.Name, Outcome: audit.RateLimited, ErrorCode: string(RateLimited)})
			return nil, (*jsonrpc.Error)(a.Limited)
		}
		return next(ctx, method, req)
	}
}

// tierRefusal is the tool error for a plan below the tool's tier.
func (s *Server) tierRefusal(ctx context.Context, p identity.Principal, tool string) *mcp.CallToolResult {
	s.audit.Write(ctx, audit.Record{Time: s.opts.Now(), Principal: p.ID, Plan: p.Plan, Scheme: p.Scheme,
		Tool: tool, Outcome: audit.Refused, ErrorCode: string(PermissionDenied)})
	return s.errorResult(&Error{Code: PermissionDenied, Message: "Your plan does not include this tool.",
		Hint: "Ask the operator for a plan that includes it."}, "")
}

func auditRateLimited(now time.Time, p identity.Principal, tool, network string) audit.Record {
	return audit.Record{Time: now, Principal: p.ID, Plan: p.Plan, Scheme: p.Scheme, Network: network,
		Tool: tool, Outcome: audit.RateLimited, ErrorCode: string(RateLimited)}
}
