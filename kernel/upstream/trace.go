package upstream

import (
	"context"

	"github.com/bulwarkmcp/bulwark/kernel/internal/w3ctrace"
)

type traceKey struct{}

type trace struct{ parent, state string }

// WithTrace returns ctx carrying W3C trace headers for the upstream calls made
// with it, checked by the same grammar as the HTTP guards' (see httpguard's
// TraceHeaders). An invalid traceparent drops both values (a tracestate
// without a traceparent means nothing); an invalid tracestate is dropped
// alone.
func WithTrace(ctx context.Context, traceparent, tracestate string) context.Context {
	if _, err := w3ctrace.Parse(traceparent); err != nil {
		return context.WithValue(ctx, traceKey{}, trace{})
	}
	if w3ctrace.ValidState(tracestate) != nil {
		tracestate = ""
	}
	return context.WithValue(ctx, traceKey{}, trace{traceparent, tracestate})
}

// TraceFrom returns the trace headers WithTrace stored in ctx, or empty strings.
func TraceFrom(ctx context.Context) (traceparent, tracestate string) {
	t, _ := ctx.Value(traceKey{}).(trace)
	return t.parent, t.state
}
