package kernel

import (
	"context"
	"net/http"

	"github.com/bulwarkmcp/bulwark/kernel/audit"
)

// An Observer watches servers for metrics and traces; kernel/observe
// implements it. New calls Observe once, with the server's name and the
// names of the tools it registered. A nil Options.Observer (the default)
// observes nothing and adds nothing to the call path.
type Observer interface {
	Observe(server string, tools []string) ServerObserver
}

// A ServerObserver watches one server. The audit record is the one
// measurement of a call: the observer reads outcome, error code, latency and
// confirmation from it rather than measuring again.
type ServerObserver interface {
	// Write receives every audit record (tool calls, and calls refused at
	// admission), after the server's own audit sink.
	audit.Sink
	// StartCall is called as a tools/call reaches the tool layer; the
	// call's record is written with the context it returns, so what starts
	// here (a span, an in-flight count) ends in Write.
	StartCall(ctx context.Context, tool string) context.Context
	// HTTP wraps the MCP endpoint: guards is the transport guards'
	// middleware and next what runs once they let a request through, so the
	// observer tells a guard's refusal from the server's own answer.
	HTTP(guards func(http.Handler) http.Handler, next http.Handler) http.Handler
}

// observe attaches opts.Observer, once the tools are registered.
func (s *Server) observe() {
	if s.opts.Observer == nil {
		return
	}
	names := make([]string, len(s.tools))
	for i, t := range s.tools {
		names[i] = t.name
	}
	s.obs = s.opts.Observer.Observe(s.name, names)
	if s.obs != nil {
		s.audit = teeSink{s.audit, s.obs}
	}
}

// startCall is the tool layer's hook: without an observer it returns ctx
// as it is.
func (s *Server) startCall(ctx context.Context, tool string) context.Context {
	if s.obs == nil {
		return ctx
	}
	return s.obs.StartCall(ctx, tool)
}

// observeHTTP composes the guards and the endpoint, through the observer
// when there is one.
func (s *Server) observeHTTP(guards func(http.Handler) http.Handler, next http.Handler) http.Handler {
	if s.obs == nil {
		return guards(next)
	}
	return s.obs.HTTP(guards, next)
}

func confirmEvent(hadToken bool) audit.Confirm {
	if hadToken {
		return audit.ConfirmRefused
	}
	return audit.ConfirmIssued
}

// teeSink writes each record to the audit sink, then to the observer.
type teeSink struct{ first, second audit.Sink }

func (t teeSink) Write(ctx context.Context, r audit.Record) {
	t.first.Write(ctx, r)
	t.second.Write(ctx, r)
}
