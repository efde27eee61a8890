package gateway

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/kernel"
)

// An upstream's question the gateway does not relay — any elicitation or
// sampling request of an upstream whose configuration does not allow it,
// or one over the relay's limits — is answered with an error, and the
// calls to that upstream in flight when it was asked fail with
// upstream_error, whatever the upstream then answers: a call never
// completes as if the question had been put to the person.
// (A decline — the client lacks the capability, several calls in flight —
// is an answer, and the call goes on.)

// watchAsks counts the questions the gateway refused the upstream.
func (l *link) watchAsks(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if err != nil && (method == "elicitation/create" || method == "sampling/createMessage") {
			l.refusedAsks.Add(1) // before the refusal is sent, so before the call can end
		}
		return res, err
	}
}

// askRefused is the call's error when the gateway refused a question of
// the upstream's (one more than before the call) during it.
func (l *link) askRefused(before uint64) error {
	if l.refusedAsks.Load() == before {
		return nil
	}
	return &kernel.Error{Code: kernel.UpstreamError,
		Message: fmt.Sprintf("The upstream %q asked the client for input (elicitation or sampling) that the gateway did not relay, so the call failed.", l.u.Name),
		Hint:    "The gateway's configuration decides what an upstream may ask (relay_elicitation, relay_sampling), within the relay's limits."}
}
