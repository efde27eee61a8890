package vdb

import (
	"context"
	"testing"
	"time"

	"github.com/bulwarkmcp/bulwark/internal/fake/vdbapi"
	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/identity"
)

// BenchmarkGetCached: the fetch layer alone (credential, cache key, cache
// or upstream, checks), the same request against the fake with the cache
// off (the baseline) and on, interleaved. The tool-level comparison is
// BenchmarkCachedCall; this one leaves out the MCP round trip both share.
func BenchmarkGetCached(b *testing.B) {
	fake := vdbapi.Start(b, nil)
	key := fake.AddKey(vdbapi.OrgA, "secret-a")
	mk := func(entries int) *Server {
		s, err := New(Config{APIBaseURL: fake.APIURL(), SiteBaseURL: fake.SiteURL(), CacheEntries: entries},
			Deps{Credential: func(*kernel.Call) (string, error) { return key, nil }})
		if err != nil {
			b.Fatal(err)
		}
		return s
	}
	off, on := mk(-1), mk(0)
	call := &kernel.Call{Principal: identity.Principal{ID: "alice"}}
	segs := []string{"vuln", vdbapi.Log4Shell, "kev"}
	ctx := context.Background()
	if _, err := on.get(ctx, call, segs, nil); err != nil {
		b.Fatal(err)
	}
	var cold, warm time.Duration
	for b.Loop() {
		start := time.Now()
		if _, err := off.get(ctx, call, segs, nil); err != nil {
			b.Fatal(err)
		}
		cold += time.Since(start)
		start = time.Now()
		if f, err := on.get(ctx, call, segs, nil); err != nil || !f.cached {
			b.Fatal("not cached", err)
		}
		warm += time.Since(start)
	}
	n := float64(b.N)
	b.ReportMetric(float64(cold.Nanoseconds())/n, "uncached-ns/op")
	b.ReportMetric(float64(warm.Nanoseconds())/n, "cached-ns/op")
	b.ReportMetric(float64(cold)/float64(warm), "uncached/cached")
}
