package observe

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/bulwarkmcp/bulwark/kernel/audit"
	"github.com/bulwarkmcp/bulwark/kernel/upstream"
)

// Span attribute keys. Semantic-convention names where one exists.
const (
	attrMethod     = "mcp.method.name"
	attrTool       = "gen_ai.tool.name"
	attrServer     = "bulwark.server"
	attrOutcome    = "bulwark.outcome"
	attrErrorCode  = "error.type"
	attrErrorID    = "bulwark.error_id"
	attrConfirm    = "bulwark.confirm"
	attrUpstreams  = "bulwark.upstream_calls"
	attrHTTPMethod = "http.request.method"
	attrHost       = "server.address"
	attrStatus     = "http.response.status_code"
	attrRetry      = "bulwark.retry"
)

// tracecontext is the W3C Trace Context propagator: the only one, since
// the guards validate exactly traceparent and tracestate.
var tracecontext = propagation.TraceContext{}

// StartCall implements kernel.ServerObserver: the call's span, a child of
// the request's validated traceparent, and its in-flight count. Upstream
// calls made with the returned context get child spans.
func (s *server) StartCall(ctx context.Context, tool string) context.Context {
	c := &call{}
	if s.m != nil {
		s.m.callsInFlight.Inc()
		c.counted = true
	}
	if s.tracer != nil {
		ctx = parentFromTrace(ctx)
		ctx, c.span = s.tracer.Start(ctx, "tools/call "+s.toolName(tool), trace.WithSpanKind(trace.SpanKindServer),
			trace.WithAttributes(attribute.String(attrMethod, "tools/call"), attribute.String(attrTool, s.toolName(tool)),
				attribute.String(attrServer, s.name)))
		ctx = withSpanTrace(ctx)
	}
	ctx = context.WithValue(ctx, callKey{}, c)
	return upstream.WithObserver(ctx, s)
}

// parentFromTrace continues the trace the request named: the traceparent
// the HTTP guard validated and the admission put in the context.
func parentFromTrace(ctx context.Context) context.Context {
	tp, ts := upstream.TraceFrom(ctx)
	if tp == "" {
		return ctx
	}
	return tracecontext.Extract(ctx, propagation.MapCarrier{"traceparent": tp, "tracestate": ts})
}

// withSpanTrace makes the context's span the trace context upstream
// requests send: kernel/upstream writes the headers, from WithTrace.
func withSpanTrace(ctx context.Context) context.Context {
	c := propagation.MapCarrier{}
	tracecontext.Inject(ctx, c)
	return upstream.WithTrace(ctx, c["traceparent"], c["tracestate"])
}

// Write implements kernel.ServerObserver (audit.Sink): it counts the record
// and ends the call's span, or records a refusal at admission as a span of
// its own.
func (s *server) Write(ctx context.Context, r audit.Record) {
	c := callFrom(ctx)
	tool := s.toolName(r.Tool)
	if s.m != nil {
		s.m.record(&r, tool, c != nil)
		if c != nil && c.counted {
			c.counted = false
			s.m.callsInFlight.Dec()
		}
	}
	if s.tracer == nil {
		return
	}
	if c != nil && c.span != nil {
		span := c.span
		c.span = nil
		annotate(span, &r)
		span.End()
		return
	}
	var span trace.Span
	{
		// Refused before the tool layer: a span over the refusal.
		_, span = s.tracer.Start(parentFromTrace(ctx), "tools/call "+tool, trace.WithSpanKind(trace.SpanKindServer),
			trace.WithTimestamp(r.Time), trace.WithAttributes(attribute.String(attrMethod, "tools/call"),
				attribute.String(attrTool, tool), attribute.String(attrServer, s.name)))
	}
	annotate(span, &r)
	span.End(trace.WithTimestamp(r.Time.Add(r.Duration)))
}

// annotate sets what the record says of the call: never an argument, a
// principal or a credential.
func annotate(span trace.Span, r *audit.Record) {
	attrs := []attribute.KeyValue{attribute.String(attrOutcome, string(r.Outcome)),
		attribute.Int(attrUpstreams, r.UpstreamCalls)}
	if r.ErrorCode != "" {
		attrs = append(attrs, attribute.String(attrErrorCode, r.ErrorCode))
	}
	if r.ErrorID != "" {
		attrs = append(attrs, attribute.String(attrErrorID, r.ErrorID))
	}
	if r.Confirm != "" {
		attrs = append(attrs, attribute.String(attrConfirm, string(r.Confirm)))
	}
	span.SetAttributes(attrs...)
	if r.Outcome != audit.OK {
		span.SetStatus(codes.Error, r.ErrorCode)
	}
}

// Attempt implements upstream.Observer: a client span per attempt, made
// the attempt's traceparent, and the upstream counters.
func (s *server) Attempt(ctx context.Context, method, host string, retry bool) (context.Context, func(int, error)) {
	start := time.Now()
	var span trace.Span
	if s.tracer != nil {
		ctx, span = s.tracer.Start(ctx, method, trace.WithSpanKind(trace.SpanKindClient),
			trace.WithAttributes(attribute.String(attrHTTPMethod, method), attribute.String(attrHost, host),
				attribute.Bool(attrRetry, retry)))
		ctx = withSpanTrace(ctx)
	}
	return ctx, func(status int, err error) {
		if s.m != nil {
			s.m.upstreamDone(start, status, err)
		}
		if span == nil {
			return
		}
		if status != 0 {
			span.SetAttributes(attribute.Int(attrStatus, status))
		}
		if err != nil {
			span.SetAttributes(attribute.String(attrErrorCode, errorKind(err)))
			span.SetStatus(codes.Error, errorKind(err))
		} else if status >= 500 {
			span.SetStatus(codes.Error, statusClass(status))
		}
		span.End()
	}
}
