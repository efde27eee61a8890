package upstream

import (
	"context"
	"sync/atomic"
)

// Meter counts one tool call's upstream traffic for the audit record. The
// client adds to the Meter found in the request's context; a Meter is safe
// for concurrent use.
type Meter struct {
	calls, retries, bytesOut, bytesIn atomic.Int64
}

// MeterStats is a snapshot of a Meter.
type MeterStats struct {
	Calls    int64 // HTTP exchanges attempted, retries included
	Retries  int64 // attempts after the first of a request
	BytesOut int64 // request body bytes sent
	BytesIn  int64 // response body bytes read
}

type meterKey struct{}

// WithMeter returns a context carrying a new Meter, and the Meter.
func WithMeter(ctx context.Context) (context.Context, *Meter) {
	m := &Meter{}
	return context.WithValue(ctx, meterKey{}, m), m
}

// IsMeterKey reports whether key is the context key MeterFrom looks up: a
// context type that carries a Meter itself (the kernel's call context,
// which holds the call and its Meter in one layer) answers Value for it
// with its *Meter.
func IsMeterKey(key any) bool {
	_, ok := key.(meterKey)
	return ok
}

// MeterFrom returns the Meter in ctx, or nil.
func MeterFrom(ctx context.Context) *Meter {
	m, _ := ctx.Value(meterKey{}).(*Meter)
	return m
}

// Stats returns the counts so far. A nil Meter reports zeros.
func (m *Meter) Stats() MeterStats {
	if m == nil {
		return MeterStats{}
	}
	return MeterStats{
		Calls:    m.calls.Load(),
		Retries:  m.retries.Load(),
		BytesOut: m.bytesOut.Load(),
		BytesIn:  m.bytesIn.Load(),
	}
}

func (m *Meter) addCall(retry bool, out int) {
	if m == nil {
		return
	}
	m.calls.Add(1)
	if retry {
		m.retries.Add(1)
	}
	m.bytesOut.Add(int64(out))
}

func (m *Meter) addIn(n int) {
	if m != nil {
		m.bytesIn.Add(int64(n))
	}
}
