package httpguard

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/bulwarkmcp/bulwark/kernel/internal/w3ctrace"
)

// TraceContext is a request's validated trace headers: safe to propagate
// to an upstream as they are.
type TraceContext struct {
	Traceparent string
	Tracestate  string // empty when absent or dropped
}

// inject sets the trace headers on an outbound request's header.
func (t TraceContext) inject(h http.Header) {
	if t.Traceparent == "" {
		return
	}
	h.Set("Traceparent", t.Traceparent)
	if t.Tracestate != "" {
		h.Set("Tracestate", t.Tracestate)
	}
}

// TraceFromContext returns the validated trace headers of the request whose
// context this is; ok is false when it had no valid traceparent (or the
// traceHeaders stage did not run).
func TraceFromContext(ctx context.Context) (TraceContext, bool) {
	st := stateFrom(ctx)
	if st == nil || !st.traceOK {
		return TraceContext{}, false
	}
	return st.trace, true
}

// traceHeaders validates traceparent and tracestate by the kernel's one W3C
// Trace Context grammar (tracestate at most 512 characters of key=value
// list members, no newlines). It never refuses a
// request: invalid headers are removed so they are never forwarded or
// logged. An invalid (or repeated) traceparent removes tracestate too, as
// W3C requires; several tracestate headers are joined into one.
// The zero value is ready to use.
type traceHeaders struct{}

// Check reports what Sanitize would remove, without changing anything.
func (traceHeaders) Check(r *http.Request) error {
	_, err := traceFrom(r.Header)
	return err
}

// Sanitize removes invalid trace headers from h and returns the valid ones.
func (traceHeaders) Sanitize(h http.Header) (TraceContext, bool) {
	tc, err := traceFrom(h)
	switch {
	case tc.Traceparent == "":
		h.Del("Traceparent")
		h.Del("Tracestate")
		return TraceContext{}, false
	case tc.Tracestate == "" || err != nil:
		h.Del("Tracestate")
	default:
		h.Set("Tracestate", tc.Tracestate)
	}
	return tc, true
}

// traceFrom returns the valid trace context in h and the first problem.
func traceFrom(h http.Header) (TraceContext, error) {
	parents := h.Values("Traceparent")
	if len(parents) == 0 {
		return TraceContext{}, nil
	}
	if len(parents) > 1 {
		return TraceContext{}, fmt.Errorf("repeated header: %w", errInvalidTraceparent)
	}
	if _, err := w3ctrace.Parse(parents[0]); err != nil {
		return TraceContext{}, fmt.Errorf("%w: %w", errInvalidTraceparent, err)
	}
	tc := TraceContext{Traceparent: parents[0]}
	states := h.Values("Tracestate")
	if len(states) == 0 {
		return tc, nil
	}
	state := states[0]
	if len(states) > 1 {
		state = strings.Join(states, ",")
	}
	if err := w3ctrace.ValidState(state); err != nil {
		return tc, fmt.Errorf("%w: %w", errInvalidTracestate, err)
	}
	tc.Tracestate = state
	return tc, nil
}

// Handler sanitizes the trace headers, records the valid ones for
// TraceFromContext, and calls next.
func (t traceHeaders) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tc, ok := t.Sanitize(r.Header)
		if ok {
			var st *reqState
			var created bool
			r, st, created = withState(r)
			if created {
				defer st.release()
			}
			st.trace, st.traceOK = tc, true
		}
		next.ServeHTTP(w, r)
	})
}
