package kernel

import (
	"context"
	"net/http"
	"testing"
)

// TestNoObserverCostsNothing: without an observer the call hook allocates
// nothing and returns the context as it was, and the HTTP hook is the
// guards around the endpoint, unwrapped.
func TestNoObserverCostsNothing(t *testing.T) {
	s, err := New(Info{Name: "t"}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if n := testing.AllocsPerRun(100, func() { _ = s.startCall(ctx, "x") }); n != 0 {
		t.Errorf("startCall without an observer allocates %v times", n)
	}
	if s.startCall(ctx, "x") != ctx {
		t.Error("startCall without an observer changed the context")
	}
	var wrapped int
	guards := func(h http.Handler) http.Handler { wrapped++; return h }
	next := http.NotFoundHandler()
	if h := s.observeHTTP(guards, next); wrapped != 1 || h == nil {
		t.Errorf("observeHTTP: guards applied %d times", wrapped)
	}
	if _, teed := s.audit.(teeSink); teed {
		t.Error("the audit sink was wrapped without an observer")
	}
}
