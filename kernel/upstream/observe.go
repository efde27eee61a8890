package upstream

import "context"

// An Observer watches upstream attempts for metrics and traces (the
// kernel's observability room, kernel/observe, implements it). The client
// finds it in the request's context; without one an attempt costs nothing
// more than the context lookup.
type Observer interface {
	// Attempt is called before each HTTP attempt (retries included) with
	// the method and the upstream's host; never the path or the query,
	// which may hold a caller's arguments. The context it returns is the
	// attempt's: a trace span in it becomes the attempt's traceparent
	// through WithTrace, so the headers are still written in one place.
	// done is called once with the final status (0 when none) and error.
	Attempt(ctx context.Context, method, host string, retry bool) (context.Context, func(status int, err error))
}

type observerKey struct{}

// WithObserver returns ctx carrying o for the upstream calls made with it.
func WithObserver(ctx context.Context, o Observer) context.Context {
	return context.WithValue(ctx, observerKey{}, o)
}

func observerFrom(ctx context.Context) Observer {
	o, _ := ctx.Value(observerKey{}).(Observer)
	return o
}

func statusOf(r *Response) int {
	if r == nil {
		return 0
	}
	return r.StatusCode
}
