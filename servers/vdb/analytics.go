package vdb

import (
	"context"
	"encoding/json"
	"io"
	"sync"
	"time"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/upstream"
)

// Point is one analytics data point per tool call (the security page's
// "What is recorded"). It never holds the credential, the organisation id
// or an argument: only the tool, how it went and what it cost.
type Point struct {
	Time          time.Time     `json:"time"`
	Tool          string        `json:"tool"`
	Plan          string        `json:"plan,omitempty"`
	Scheme        string        `json:"credential_scheme"` // apikey, bearer or none
	Outcome       string        `json:"outcome"`           // ok or an error code
	AI            string        `json:"ai"`                // off (no enrichment in this build)
	Latency       time.Duration `json:"latency_ns"`
	UpstreamCalls int64         `json:"upstream_calls"`
	Retries       int64         `json:"retries"`
	BytesIn       int64         `json:"upstream_bytes_in"`
	BytesOut      int64         `json:"upstream_bytes_out"`
	CacheHit      bool          `json:"cache_hit"`
}

// Analytics receives points; Write must be safe for concurrent use.
type Analytics interface {
	Write(ctx context.Context, p Point)
}

type discardAnalytics struct{}

func (discardAnalytics) Write(context.Context, Point) {}

// JSONAnalytics writes one JSON line per point.
type JSONAnalytics struct {
	mu sync.Mutex
	w  io.Writer
}

// NewJSONAnalytics returns a sink writing to w.
func NewJSONAnalytics(w io.Writer) *JSONAnalytics { return &JSONAnalytics{w: w} }

// Write implements Analytics.
func (j *JSONAnalytics) Write(_ context.Context, p Point) {
	b, err := json.Marshal(p)
	if err != nil {
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	_, _ = j.w.Write(append(b, '\n'))
}

// notes collects what a handler learns during a call.
type notes struct {
	mu     sync.Mutex
	scheme string
	hit    bool
}

type notesKey struct{}

func noteCredential(ctx context.Context, scheme string) {
	if n, ok := ctx.Value(notesKey{}).(*notes); ok {
		n.mu.Lock()
		n.scheme = scheme
		n.mu.Unlock()
	}
}

func noteCache(ctx context.Context, hit bool) {
	if n, ok := ctx.Value(notesKey{}).(*notes); ok {
		n.mu.Lock()
		n.hit = hit
		n.mu.Unlock()
	}
}

// measured wraps a handler so that each call writes one Point.
func measured[In, Out any](s *Server, name string, h func(ctx context.Context, call *kernel.Call, in In) (Out, error)) func(ctx context.Context, call *kernel.Call, in In) (Out, error) {
	return func(ctx context.Context, call *kernel.Call, in In) (Out, error) {
		start := s.now()
		before := upstream.MeterFrom(ctx).Stats()
		n := &notes{scheme: "none"}
		out, err := h(context.WithValue(ctx, notesKey{}, n), call, in)
		st := upstream.MeterFrom(ctx).Stats()
		p := Point{Time: start, Tool: name, Plan: call.Principal.Plan, Outcome: "ok", AI: "off", Latency: s.now().Sub(start),
			UpstreamCalls: st.Calls - before.Calls, Retries: st.Retries - before.Retries,
			BytesIn: st.BytesIn - before.BytesIn, BytesOut: st.BytesOut - before.BytesOut}
		n.mu.Lock()
		p.Scheme, p.CacheHit = n.scheme, n.hit
		n.mu.Unlock()
		if err != nil {
			p.Outcome = string(kernel.Internal)
			if ke, ok := err.(*kernel.Error); ok {
				p.Outcome = string(ke.Code)
			}
		}
		s.analytics.Write(ctx, p)
		return out, err
	}
}
