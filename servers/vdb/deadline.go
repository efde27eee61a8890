package vdb

import (
	"context"
	"errors"

	"github.com/bulwarkmcp/bulwark/kernel"
)

// errCallDeadline is the cause of a call's context that ran past
// Config.CallTimeout.
var errCallDeadline = errors.New("vdb: the call's deadline passed")

// handler is a tool's typed handler.
type handler[In any] = func(ctx context.Context, call *kernel.Call, in In) (out, error)

// bounded runs h under the call's one deadline (Config.CallTimeout): every
// upstream attempt, every wait before a retry — the outbound client makes
// no retry whose wait would end after the deadline — and the AI enrichment
// share it. A call cut short by it is a timeout error that says so.
func bounded[In any](s *Server, h handler[In]) handler[In] {
	return func(ctx context.Context, call *kernel.Call, in In) (out, error) {
		ctx, cancel := context.WithTimeoutCause(ctx, s.callLimit, errCallDeadline)
		defer cancel()
		res, err := h(ctx, call, in)
		if err != nil && errors.Is(context.Cause(ctx), errCallDeadline) {
			return nil, kernel.Errorf(kernel.Timeout, "The call did not finish within its deadline of %v, retries and the waits before them included.", s.callLimit).
				WithHint("Try again later; the VDB API may be slow or rate limiting.").WithCause(err)
		}
		return res, err
	}
}
