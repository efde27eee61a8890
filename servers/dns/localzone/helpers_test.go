package localzone

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/bulwarkmcp/bulwark/servers/dns"
)

// testClock is a settable clock for serials and action times.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

func newTestProvider(t testing.TB, dir string) (*Provider, *testClock) {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	clk := &testClock{t: time.Date(2026, 3, 14, 9, 26, 53, 0, time.UTC)}
	p, err := New(dir, &Options{Now: clk.now, DisableSync: true})
	if err != nil {
		t.Fatal(err)
	}
	return p, clk
}

func mustZone(t testing.TB, p *Provider, name string) dns.Zone {
	t.Helper()
	z, _, err := p.CreateZone(context.Background(), dns.CreateZoneRequest{Name: name, Mode: dns.ModePrimary})
	if err != nil {
		t.Fatalf("CreateZone(%s): %v", name, err)
	}
	return z
}

// wantCode fails unless err is a *dns.Error with code and status.
func wantCode(t testing.TB, err error, status int, code string) *dns.Error {
	t.Helper()
	var de *dns.Error
	if !errors.As(err, &de) {
		t.Fatalf("error = %v (%T), want *dns.Error %s", err, err, code)
	}
	if de.Code != code || de.Status != status {
		t.Fatalf("error = %d %s (%q), want %d %s", de.Status, de.Code, de.Message, status, code)
	}
	return de
}

func recs(values ...string) []dns.Record {
	out := make([]dns.Record, len(values))
	for i, v := range values {
		out[i] = dns.Record{Value: v}
	}
	return out
}

func values(s dns.RRSet) []string {
	out := make([]string, len(s.Records))
	for i, r := range s.Records {
		out[i] = r.Value
	}
	return out
}

var bg = context.Background()
