// Package observe is the kernel's observability room: Prometheus metrics and
// OpenTelemetry traces for the servers built on the kernel, both off unless
// configured. It implements kernel.Observer.
//
// The audit record is the one measurement of a call (outcome, error code,
// latency, confirmation); metrics and spans are made from it. No label or
// attribute ever holds an argument's value, a credential or a principal's
// id: tool labels are the tools the server registered (any other name is
// "other"), and the other labels come from fixed sets.
package observe

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/upstream"
)

// Options configure an Observer. The zero value observes nothing.
type Options struct {
	// Registerer receives the metrics (docs/operations.md lists the names); nil
	// means no metrics.
	Registerer prometheus.Registerer
	// TracerProvider makes the spans; nil means no traces.
	TracerProvider trace.TracerProvider
}

// Observer watches one or more servers. It is safe for concurrent use.
type Observer struct {
	m      *metrics
	tracer trace.Tracer
}

// Interface guards.
var (
	_ kernel.Observer       = (*Observer)(nil)
	_ kernel.ServerObserver = (*server)(nil)
	_ upstream.Observer     = (*server)(nil)
)

// tracerName is the instrumentation scope of the spans.
const tracerName = "github.com/bulwarkmcp/bulwark/kernel/observe"

// New returns an Observer, registering its metrics with opts.Registerer.
func New(opts *Options) (*Observer, error) {
	o := &Observer{}
	if opts == nil {
		return o, nil
	}
	if opts.Registerer != nil {
		m, err := newMetrics(opts.Registerer)
		if err != nil {
			return nil, err
		}
		o.m = m
	}
	if opts.TracerProvider != nil {
		o.tracer = opts.TracerProvider.Tracer(tracerName)
	}
	return o, nil
}

// Observe implements kernel.Observer. It returns nil (observe nothing) when
// neither metrics nor traces are on.
func (o *Observer) Observe(name string, tools []string) kernel.ServerObserver {
	if o.m == nil && o.tracer == nil {
		return nil
	}
	s := &server{name: name, tracer: o.tracer, known: make(map[string]bool, len(tools))}
	for _, t := range tools {
		s.known[t] = true
	}
	if o.m != nil {
		s.m = o.m.forServer(name, tools)
	}
	return s
}

// server watches one server: metrics resolved for its labels, the tracer.
type server struct {
	name   string
	known  map[string]bool
	m      *serverMetrics // nil: no metrics
	tracer trace.Tracer   // nil: no traces
}

// toolName bounds a tool label to the registered tools.
func (s *server) toolName(tool string) string {
	if s.known[tool] {
		return tool
	}
	return otherTool
}

// otherTool is the label of every tool name the server did not register.
const otherTool = "other"

type callKey struct{}

// call is what StartCall began and Write ends.
type call struct {
	span    trace.Span // nil without traces
	counted bool       // in the in-flight gauge
}

func callFrom(ctx context.Context) *call {
	c, _ := ctx.Value(callKey{}).(*call)
	return c
}
