package gateway

// The gateway's audit sink: each record of a relayed tool names its
// upstream and the pin its call was checked under.

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/bulwarkmcp/bulwark/kernel/audit"
)

// Audit wraps a sink so that each record of a relayed tool names its
// upstream and the pin hash the call was checked under.
func (g *Gateway) Audit(next audit.Sink) audit.Sink {
	if next == nil {
		next = audit.Discard
	}
	g.auditSink = next // what the relayed requests that are not tool calls write (auditRelayed)
	ups := map[string]string{}
	for _, u := range g.cfg.Upstreams {
		ups[u.prefix()] = u.Name
	}
	return audit.Func(func(ctx context.Context, r audit.Record) {
		for i := 0; i < len(r.Tool); i++ {
			if r.Tool[i] == '.' {
				r.Upstream = ups[r.Tool[:i]]
				break
			}
		}
		if h, ok := g.pins.Load(r.Tool); ok {
			r.Pin = h.(string)
		}
		next.Write(ctx, r)
	})
}

// auditRelayed writes the record of a relayed request that is not a tool
// call (prompts/get, completion/complete): refused when the request was
// not valid, an upstream error otherwise; nothing when Audit was never
// called.
func (g *Gateway) auditRelayed(ctx context.Context, rec audit.Record, err *jsonrpc.Error) {
	if err != nil {
		rec.Outcome, rec.ErrorCode = audit.Refused, "invalid_params"
		if err.Code != jsonrpc.CodeInvalidParams {
			rec.Outcome, rec.ErrorCode = audit.ToolError, "upstream_error"
		}
	}
	if g.auditSink != nil {
		g.auditSink.Write(ctx, rec)
	}
}
