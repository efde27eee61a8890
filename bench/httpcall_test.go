package bench

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/audit"
	"github.com/bulwarkmcp/bulwark/kernel/httpguard"
	"github.com/bulwarkmcp/bulwark/kernel/ratelimit"
)

// httpCallBody is bench/http's request: a stateless tools/call, 2025-11-25.
const httpCallBody = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"get_rrset","arguments":{"zone":"example.com","name":"www"}}}`

// httpServer is bench/http's kernelserver in process: every guard on, tier
// check and rate limit (raised so that nothing is refused), a JSON audit
// record per call to a writer that drops it.
func httpServer(tb testing.TB, disableFastPath bool) http.Handler {
	tiers, err := ratelimit.NewTiers(ratelimit.DefaultPlans...)
	if err != nil {
		tb.Fatal(err)
	}
	lim, err := ratelimit.NewLimiter(&ratelimit.LimiterOptions{Limit: 1 << 30, Window: time.Minute})
	if err != nil {
		tb.Fatal(err)
	}
	tool := kernel.NewTool(kernel.Spec[echoIn, echoOut]{
		Name: "get_rrset", Description: "Get an RRSet.",
		Policy: kernel.Policy{ReadOnly: kernel.Yes, Destructive: kernel.No, Idempotent: kernel.Yes, OpenWorld: kernel.Yes, Confirm: kernel.Never, Tier: kernel.Open},
		Handle: func(ctx context.Context, c *kernel.Call, in echoIn) (echoOut, error) { return echo(in), nil },
	})
	s, err := kernel.New(kernel.Info{Name: "bench-bulwark", Version: "v0"}, []kernel.Tool{tool},
		&kernel.Options{Tiers: tiers, Limiter: lim, Audit: audit.NewJSONLines(io.Discard)})
	if err != nil {
		tb.Fatal(err)
	}
	opts := kernel.HTTPOptions{Addr: "127.0.0.1:8080", DisableFastPath: disableFastPath}
	opts.Guards.Flood = &httpguard.FloodOptions{Limit: 1 << 30, Window: 10 * time.Second}
	h, err := s.HTTPHandler(opts)
	if err != nil {
		tb.Fatal(err)
	}
	return h
}

// sink is a ResponseWriter that keeps only the status and the body, reused
// between calls so that the benchmark counts the server's allocations.
type sink struct {
	h    http.Header
	code int
	body bytes.Buffer
}

func (s *sink) Header() http.Header         { return s.h }
func (s *sink) WriteHeader(code int)        { s.code = code }
func (s *sink) Write(p []byte) (int, error) { return s.body.Write(p) }

// httpCaller returns a function making one call through h, reusing one
// request and one writer.
func httpCaller(tb testing.TB, h http.Handler) func() {
	body := bytes.NewReader(nil)
	r, err := http.NewRequest(http.MethodPost, "http://127.0.0.1:8080"+kernel.MCPPath, nil)
	if err != nil {
		tb.Fatal(err)
	}
	r.RemoteAddr = "127.0.0.1:40000"
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	r.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	r.ContentLength = int64(len(httpCallBody))
	w := &sink{h: http.Header{}}
	call := func() {
		body.Reset([]byte(httpCallBody))
		r.Body = io.NopCloser(body)
		clear(w.h)
		w.code = http.StatusOK
		w.body.Reset()
		h.ServeHTTP(w, r)
	}
	call()
	if w.code != http.StatusOK || !bytes.Contains(w.body.Bytes(), []byte(`198.51.100.7`)) || bytes.Contains(w.body.Bytes(), []byte(`"isError":true`)) {
		tb.Fatalf("status %d, body %s", w.code, w.body.Bytes())
	}
	return call
}

// BenchmarkHTTPToolsCall is one tools/call through the whole HTTP handler
// in process (every guard, authentication, admission, the tool layer, the
// audit record; no network): the kernel's fast path, and the same server
// with DisableFastPath (every request through the go-sdk's handler) as the
// baseline, interleaved call by call. It reports each path's ns and
// allocations per call and fast/sdk.
func BenchmarkHTTPToolsCall(b *testing.B) {
	fast, sdk := httpCaller(b, httpServer(b, false)), httpCaller(b, httpServer(b, true))
	fastAllocs, sdkAllocs := testing.AllocsPerRun(200, fast), testing.AllocsPerRun(200, sdk)
	timed := func(f func()) time.Duration { start := time.Now(); f(); return time.Since(start) }
	var tf, ts time.Duration
	for i := 0; b.Loop(); i++ {
		if i%2 == 0 {
			tf += timed(fast)
			ts += timed(sdk)
		} else {
			ts += timed(sdk)
			tf += timed(fast)
		}
	}
	n := float64(b.N)
	b.ReportMetric(float64(tf.Nanoseconds())/n, "fast-ns/call")
	b.ReportMetric(float64(ts.Nanoseconds())/n, "sdk-ns/call")
	b.ReportMetric(fastAllocs, "fast-allocs/call")
	b.ReportMetric(sdkAllocs, "sdk-allocs/call")
	b.ReportMetric(float64(tf)/float64(ts), "fast/sdk")
}

// BenchmarkHTTPToolsCallFast is the fast path alone, with the standard
// ns/op, B/op and allocs/op, and cpu-ns/op: the process's CPU time per call
// (every thread, so the garbage collector's share is in it), which a busy
// machine disturbs less than the wall time.
func BenchmarkHTTPToolsCallFast(b *testing.B) {
	call := httpCaller(b, httpServer(b, false))
	b.ReportAllocs()
	cpu := cpuTime()
	for b.Loop() {
		call()
	}
	b.ReportMetric(float64((cpuTime()-cpu).Nanoseconds())/float64(b.N), "cpu-ns/op")
}
