package vdb_test

import (
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/bulwarkmcp/bulwark/internal/fake/vdbapi"
	"github.com/bulwarkmcp/bulwark/kernel/mcptest"
	"github.com/bulwarkmcp/bulwark/servers/vdb"
)

// BenchmarkHugeBodyRefused: vdb_vuln against an upstream that streams a
// 60 MiB body (declared length, and again without it) is refused with
// resource_exhausted; it reports the bytes allocated per call in this
// process (server, kernel, client and fake together; bound: 4 MiB).
func BenchmarkHugeBodyRefused(b *testing.B) {
	for _, declare := range []bool{true, false} {
		name := "undeclared"
		if declare {
			name = "declared"
		}
		b.Run(name, func(b *testing.B) {
			f := newFixture(b, setup{})
			f.fake.AddFault(vdbapi.Fault{Kind: vdbapi.FaultHuge, Size: 60 << 20, DeclareLength: declare, PathPrefix: "/v2/vuln/"})
			args := map[string]any{"id": vdbapi.Log4Shell}
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			for b.Loop() {
				res := f.call(b, "vdb_vuln", args)
				if !res.IsError {
					b.Fatal("a 60 MiB body was accepted")
				}
			}
			runtime.ReadMemStats(&after)
			b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(b.N), "alloc-bytes/call")
			_ = mcptest.Text
		})
	}
}

// upstreamLatency is the benchmark's realistic upstream: 20 ms, a short
// internet round trip (a client and the API in the same region; across a
// continent or an ocean it is 50–200 ms, and the cache saves more). Each
// uncached call pays it once: the server keeps its connection to the API
// alive, so there is no new TCP or TLS handshake per request.
const upstreamLatency = 20 * time.Millisecond

// BenchmarkCachedCall: the same vdb_kev_status call through the in-process
// MCP client against the fake with the cache off (the baseline: one
// upstream request per call) and on (a hit after the first), interleaved;
// it reports their ratio (of means, and of medians). Two upstreams, in the same run with the same
// settings: "loopback" (the fake answers in microseconds, so the cache
// saves little of a whole call) and "latency=20ms" (each upstream request
// waits upstreamLatency, as the real API across the internet would; the
// cache saves that round trip; bound: 10). Before timing, each setup checks
// that a cached answer is never shared across principals
// (checkCachePerPrincipal, on the same fake options and configuration).
func BenchmarkCachedCall(b *testing.B) {
	for _, c := range []struct {
		name    string
		latency time.Duration
	}{{"loopback", 0}, {"latency=20ms", upstreamLatency}} {
		b.Run(c.name, func(b *testing.B) {
			cfg := vdb.Config{}
			checkCachePerPrincipal(b, newHTTPFixtureWith(b, true, &vdbapi.Options{Latency: c.latency}, cfg))
			offCfg := cfg
			offCfg.CacheEntries = -1
			off := newFixture(b, setup{cfg: offCfg, fopts: &vdbapi.Options{Latency: c.latency}})
			on := newFixture(b, setup{cfg: cfg, fopts: &vdbapi.Options{Latency: c.latency}})
			args := map[string]any{"id": vdbapi.Log4Shell}
			if out := on.ok(b, "vdb_kev_status", args); out["cached"] != false {
				b.Fatalf("first call: %v", out)
			}
			var cold, warm time.Duration
			var colds, warms []time.Duration
			for b.Loop() {
				start := time.Now()
				out := off.ok(b, "vdb_kev_status", args)
				d := time.Since(start)
				cold += d
				colds = append(colds, d)
				if out["cached"] != false {
					b.Fatalf("cache off, yet cached: %v", out)
				}
				start = time.Now()
				out = on.ok(b, "vdb_kev_status", args)
				d = time.Since(start)
				warm += d
				warms = append(warms, d)
				if out["cached"] != true {
					b.Fatalf("cache on, not cached: %v", out)
				}
			}
			if n := on.apiCalls(); n != 1 {
				b.Fatalf("cache on: %d upstream requests, want 1", n)
			}
			n := float64(b.N)
			b.ReportMetric(float64(cold.Nanoseconds())/n, "uncached-ns/op")
			b.ReportMetric(float64(warm.Nanoseconds())/n, "cached-ns/op")
			b.ReportMetric(float64(cold)/float64(warm), "uncached/cached")
			// The ratio of medians: a few calls stalled by other load on a
			// shared machine move the means, not the medians.
			b.ReportMetric(float64(median(colds))/float64(median(warms)), "p50-uncached/cached")
		})
	}
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}
