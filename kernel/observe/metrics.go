package observe

import (
	"context"
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/bulwarkmcp/bulwark/kernel/audit"
	"github.com/bulwarkmcp/bulwark/kernel/ratelimit"
	"github.com/bulwarkmcp/bulwark/kernel/upstream"
)

// The metric names; docs/operations.md lists them with their labels.
const (
	metricCalls            = "bulwark_tool_calls_total"
	metricCallDuration     = "bulwark_tool_call_duration_seconds"
	metricCallsInFlight    = "bulwark_tool_calls_in_flight"
	metricHTTPInFlight     = "bulwark_http_requests_in_flight"
	metricRefusals         = "bulwark_refusals_total"
	metricRateLimited      = "bulwark_rate_limited_total"
	metricConfirmations    = "bulwark_confirmations_total"
	metricUpstreamRequests = "bulwark_upstream_requests_total"
	metricUpstreamErrors   = "bulwark_upstream_errors_total"
	metricUpstreamDuration = "bulwark_upstream_request_duration_seconds"
)

// outcomes are the values of the outcome label, in audit's order.
var outcomes = []audit.Outcome{audit.OK, audit.ToolError, audit.Refused, audit.RateLimited, audit.Internal}

// metrics are the collectors, shared by every server of an Observer.
type metrics struct {
	calls, refusals, rateLimited, confirms *prometheus.CounterVec
	upstream, upstreamErrors               *prometheus.CounterVec
	duration, upstreamDuration             *prometheus.HistogramVec
	callsInFlight, httpInFlight            *prometheus.GaugeVec
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{Name: metricCalls,
			Help: "Tool calls by server, tool and outcome (ok, tool_error, refused, rate_limited, internal)."}, []string{"server", "tool", "outcome"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: metricCallDuration,
			Help:    "Time from a tool call reaching the tool layer to its result.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}}, []string{"server", "tool"}),
		callsInFlight: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: metricCallsInFlight,
			Help: "Tool calls running in the tool layer."}, []string{"server"}),
		httpInFlight: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: metricHTTPInFlight,
			Help: "HTTP requests to the MCP endpoint being served."}, []string{"server"}),
		refusals: prometheus.NewCounterVec(prometheus.CounterOpts{Name: metricRefusals,
			Help: "Requests and calls refused, by the guard that refused them."}, []string{"server", "guard"}),
		rateLimited: prometheus.NewCounterVec(prometheus.CounterOpts{Name: metricRateLimited,
			Help: "Rate-limit refusals: per client address (the flood guard) or per principal (the call limit)."}, []string{"server", "scope"}),
		confirms: prometheus.NewCounterVec(prometheus.CounterOpts{Name: metricConfirmations,
			Help: "Confirmation gate decisions: token issued, redeemed, or refused (a fresh one issued)."}, []string{"server", "event"}),
		upstream: prometheus.NewCounterVec(prometheus.CounterOpts{Name: metricUpstreamRequests,
			Help: "Upstream HTTP attempts (retries included) by result: 2xx, 3xx, 4xx, 5xx or error."}, []string{"server", "result"}),
		upstreamErrors: prometheus.NewCounterVec(prometheus.CounterOpts{Name: metricUpstreamErrors,
			Help: "Upstream attempts that got no usable response, by kind."}, []string{"server", "kind"}),
		upstreamDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: metricUpstreamDuration,
			Help: "Time of one upstream HTTP attempt.", Buckets: prometheus.DefBuckets}, []string{"server"}),
	}
	for _, c := range []prometheus.Collector{m.calls, m.duration, m.callsInFlight, m.httpInFlight, m.refusals,
		m.rateLimited, m.confirms, m.upstream, m.upstreamErrors, m.upstreamDuration} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// serverMetrics are one server's collectors, with the call counters
// resolved per registered tool so that a call looks up no label.
type serverMetrics struct {
	*metrics
	name          string
	tools         map[string]*toolMetrics
	callsInFlight prometheus.Gauge
	httpInFlight  prometheus.Gauge
}

type toolMetrics struct {
	calls    [5]prometheus.Counter // by outcomes' index
	duration prometheus.Observer
}

func (m *metrics) forServer(name string, tools []string) *serverMetrics {
	sm := &serverMetrics{metrics: m, name: name, tools: map[string]*toolMetrics{},
		callsInFlight: m.callsInFlight.WithLabelValues(name), httpInFlight: m.httpInFlight.WithLabelValues(name)}
	for _, t := range append([]string{otherTool}, tools...) {
		tm := &toolMetrics{duration: m.duration.WithLabelValues(name, t)}
		for i, o := range outcomes {
			tm.calls[i] = m.calls.WithLabelValues(name, t, string(o))
		}
		sm.tools[t] = tm
	}
	return sm
}

// record counts one audit record. timed says the call went through the
// tool layer (StartCall), so its duration is a call's latency.
func (sm *serverMetrics) record(r *audit.Record, tool string, timed bool) {
	tm := sm.tools[tool]
	for i, o := range outcomes {
		if r.Outcome == o {
			tm.calls[i].Inc()
		}
	}
	if timed {
		tm.duration.Observe(r.Duration.Seconds())
	}
	if g := refusalGuard(r); g != "" {
		sm.refusals.WithLabelValues(sm.name, g).Inc()
	}
	if r.Outcome == audit.RateLimited {
		sm.rateLimited.WithLabelValues(sm.name, scopePrincipal).Inc()
	}
	switch r.Confirm {
	case audit.ConfirmIssued, audit.ConfirmRedeemed, audit.ConfirmRefused:
		sm.confirms.WithLabelValues(sm.name, string(r.Confirm)).Inc()
	}
}

// Values of the rate_limited scope label: ratelimit's own names for the
// flood guard (per client address) and the call limit (per principal).
const (
	scopeAddress   = string(ratelimit.ScopeAddress)
	scopePrincipal = string(ratelimit.ScopePrincipal)
)

// refusalGuard names the guard behind a refused record, or "".
func refusalGuard(r *audit.Record) string {
	switch r.Outcome {
	case audit.RateLimited:
		return guardLimit
	case audit.Refused:
	default:
		return ""
	}
	switch r.ErrorCode {
	case "permission_denied":
		return guardTier
	case "store_unavailable":
		return guardStore
	case "confirmation_required":
		return guardConfirm
	}
	return guardOther
}

// upstreamDone counts one upstream attempt.
func (sm *serverMetrics) upstreamDone(start time.Time, status int, err error) {
	sm.upstreamDuration.WithLabelValues(sm.name).Observe(time.Since(start).Seconds())
	if err != nil {
		sm.upstream.WithLabelValues(sm.name, "error").Inc()
		sm.upstreamErrors.WithLabelValues(sm.name, errorKind(err)).Inc()
		return
	}
	sm.upstream.WithLabelValues(sm.name, statusClass(status)).Inc()
}

func statusClass(status int) string {
	switch {
	case status >= 200 && status < 300:
		return "2xx"
	case status >= 300 && status < 400:
		return "3xx"
	case status >= 400 && status < 500:
		return "4xx"
	case status >= 500 && status < 600:
		return "5xx"
	}
	return "other"
}

// errorKind names an upstream error by its sentinel, never by its text.
func errorKind(err error) string {
	switch {
	case errors.Is(err, upstream.ErrTimeout), errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.Is(err, upstream.ErrRedirect):
		return "redirect"
	case errors.Is(err, upstream.ErrResponseTooLarge):
		return "too_large"
	case errors.Is(err, upstream.ErrTransport):
		return "transport"
	case errors.Is(err, upstream.ErrRequest):
		return "request"
	}
	return "other"
}
