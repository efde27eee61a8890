package vdb

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/bulwarkmcp/bulwark/internal/fake/vdbapi"
	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/identity"
)

// overFake is a Server over the fake, with key as its credential and
// cacheEntries as Config.CacheEntries.
func overFake(tb testing.TB, fake *vdbapi.Server, key string, cacheEntries int) *Server {
	s, err := New(Config{APIBaseURL: fake.APIURL(), SiteBaseURL: fake.SiteURL(), CacheEntries: cacheEntries},
		Deps{Credential: func(*kernel.Call) (string, error) { return key, nil }})
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// BenchmarkGetCached: the fetch layer alone (credential, cache key, cache
// or upstream, checks), the same request against the fake with the cache
// off (the baseline) and on, interleaved. The tool-level comparison is
// BenchmarkCachedCall; this one leaves out the MCP round trip both share.
func BenchmarkGetCached(b *testing.B) {
	fake := vdbapi.Start(b, nil)
	key := fake.AddKey(vdbapi.OrgA, "secret-a")
	off, on := overFake(b, fake, key, -1), overFake(b, fake, key, 0)
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
		if _, err := summarize(body); err != nil {
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
