package httpguard

import (
	"context"
	"net/http"
)

// reqState is what the guards learn about one request, shared by every
// stage through the request context so the body is read once and parsed
// once. It is allocated per request and never reused, so values taken from
// it stay valid after the request ends (only the pooled body buffer is
// recycled, and only when no caller was handed its bytes).
type reqState struct {
	body   bodyCache
	reader bodyReader // r.Body for later stages, allocated with the state

	envDone bool
	env     Message
	envErr  error

	traceOK bool
	trace   TraceContext
}

type stateKey struct{}

func stateFrom(ctx context.Context) *reqState {
	st, _ := ctx.Value(stateKey{}).(*reqState)
	return st
}

// withState returns r carrying a reqState, adding one when r has none.
// created reports whether the caller owns (and must release) it.
func withState(r *http.Request) (*http.Request, *reqState, bool) {
	if st := stateFrom(r.Context()); st != nil {
		return r, st, false
	}
	st := new(reqState)
	return r.WithContext(context.WithValue(r.Context(), stateKey{}, st)), st, true
}

// release returns pooled memory once the request has been served.
func (st *reqState) release() { st.body.release() }
