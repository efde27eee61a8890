package vdb_test

import (
	"encoding/json"
	"io"
	"net/http"
	"runtime"
	"testing"
	"time"

	"github.com/bulwarkmcp/bulwark/internal/fake/vdbapi"
	"github.com/bulwarkmcp/bulwark/kernel/mcptest"
	"github.com/bulwarkmcp/bulwark/servers/vdb"
)

// largeRecord fetches the fake's record over 2 MB, as the API serves it.
func largeRecord(b *testing.B) []byte {
	fake := vdbapi.Start(b, nil)
	key := fake.AddKey(vdbapi.OrgA, "secret-a")
	req, _ := http.NewRequest("GET", fake.APIURL()+"/v2/vuln/"+vdbapi.LargeVulnID, nil)
	req.Header.Set("Authorization", "ApiKey "+key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil || len(body) < 2_000_000 {
		b.Fatalf("record of %d bytes: %v", len(body), err)
	}
	return body
}

// BenchmarkSummarize2MB shapes a record over 2 MB into its summary and, in
// the same iteration, decodes the same bytes with encoding/json into an
// any (the baseline). It reports both and their ratio (bound: 2).
func BenchmarkSummarize2MB(b *testing.B) {
	body := largeRecord(b)
	var shape, plain time.Duration
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		start := time.Now()
		if _, err := vdb.Summarize(body); err != nil {
			b.Fatal(err)
		}
		shape += time.Since(start)
		start = time.Now()
		var v any
		if err := json.Unmarshal(body, &v); err != nil {
			b.Fatal(err)
		}
		plain += time.Since(start)
	}
	n := float64(b.N)
	b.ReportMetric(float64(shape.Nanoseconds())/n, "summary-ns/op")
	b.ReportMetric(float64(plain.Nanoseconds())/n, "decode-ns/op")
	b.ReportMetric(float64(shape)/float64(plain), "summary/decode")
}

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

// BenchmarkCachedCall: the same vdb_kev_status call against the fake with
// the cache off (the baseline: one upstream request per call) and on (a
// hit after the first), interleaved; it reports their ratio (bound: 10).
func BenchmarkCachedCall(b *testing.B) {
	off := newFixture(b, setup{cfg: vdb.Config{CacheEntries: -1}})
	on := newFixture(b, setup{})
	args := map[string]any{"id": vdbapi.Log4Shell}
	on.ok(b, "vdb_kev_status", args)
	var cold, warm time.Duration
	for b.Loop() {
		start := time.Now()
		off.ok(b, "vdb_kev_status", args)
		cold += time.Since(start)
		start = time.Now()
		on.ok(b, "vdb_kev_status", args)
		warm += time.Since(start)
	}
	n := float64(b.N)
	b.ReportMetric(float64(cold.Nanoseconds())/n, "uncached-ns/op")
	b.ReportMetric(float64(warm.Nanoseconds())/n, "cached-ns/op")
	b.ReportMetric(float64(cold)/float64(warm), "uncached/cached")
}
