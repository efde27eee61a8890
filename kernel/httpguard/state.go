package httpguard

import (
	"context"
	"net/http"

	"github.com/bulwarkmcp/bulwark/kernel/internal/reqscope"
)

// reqState is what the guards learn about one request, shared by every
// stage through the request context so the body is read once and parsed
// once. It is allocated per request and never reused, so values taken from
// it stay valid after the request ends (only the pooled body buffer is
// recycled, and only when no caller was handed its bytes).
type reqState struct {
	scope  reqscope.Scope // the request's one context value, allocated with the state
	body   bodyCache
	reader bodyReader // r.Body for later stages, allocated with the state

	envDone bool
	env     Message
	envErr  error

	traceOK bool
	trace   TraceContext
}

func stateFrom(ctx context.Context) *reqState {
	sc := reqscope.From(ctx)
	if sc == nil {
		return nil
	}
	st, _ := sc.Guards.(*reqState)
	return st
}

// withState returns r carrying a reqState, adding one when r has none: in
// the request's reqscope.Scope (kernel/internal/reqscope), the one context
// value every kernel layer shares, created here when r has none. Adding a
// state returns a copy of r, which the caller may change (the body guard
// replaces its Body) without touching the request it was handed.
// created reports whether the caller owns (and must release) it.
func withState(r *http.Request) (*http.Request, *reqState, bool) {
	sc := reqscope.From(r.Context())
	if sc != nil {
		if st, ok := sc.Guards.(*reqState); ok {
			return r, st, false
		}
		st := new(reqState)
		sc.Guards = st
		return r.WithContext(r.Context()), st, true
	}
	st := new(reqState)
	st.scope.Guards = st
	return reqscope.With(r, &st.scope), st, true
}

// release returns pooled memory once the request has been served.
func (st *reqState) release() { st.body.release() }
