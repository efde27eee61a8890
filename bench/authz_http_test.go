package bench

import (
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/httpguard"
)

const authzHTTPAddr = "127.0.0.1:8080"

// authzHTTPHandler is authzKernelServer's whole HTTP surface: every guard
// (the flood guard off, so that the benchmark's own traffic is never
// refused), no authentication (principal "local"), the fast path on as in
// the binary.
func authzHTTPHandler(tb testing.TB, policy string) http.Handler {
	h, err := authzKernel(tb, policy).HTTPHandler(kernel.HTTPOptions{Addr: authzHTTPAddr,
		Guards: httpguard.PipelineOptions{DisableFlood: true}})
	if err != nil {
		tb.Fatal(err)
	}
	return h
}

const authzHTTPBody = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"get_rrset","arguments":{"zone":"Example.com.","name":"www"}}}`

// serveMCP sends one JSON-RPC request to h in process (no socket: the
// handler's own work is the whole denominator) and returns the answer.
func serveMCP(h http.Handler, body string) *httptest.ResponseRecorder {
	r := httptest.NewRequest("POST", "http://"+authzHTTPAddr+kernel.MCPPath, strings.NewReader(body))
	r.RemoteAddr = "127.0.0.1:40000"
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// serveAuthzCall sends one tools/call to h and checks the answer.
func serveAuthzCall(tb testing.TB, h http.Handler, body string) {
	w := serveMCP(h, body)
	if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `"isError":false`) && strings.Contains(w.Body.String(), `"isError"`) {
		tb.Fatalf("call failed: %d %s", w.Code, w.Body)
	}
}

// BenchmarkAuthzHTTPCall is BenchmarkAuthzToolCallCPU over the HTTP
// handler (guards, authentication, fast path, tool layer: the path a
// client of the binary takes, without the socket), in process CPU time
// over rotating blocks of 100 calls: without a policy, with a policy that
// permits everything without reading anything (permitAllPolicy), and with
// the eight-policy file. The request is built and the answer read in all
// three, which slightly understates the handler's share.
//
// step-cpu-ns/call is the difference of the means with the policy file and
// without a policy: the whole authorization step (the tool's target
// resolver, the request, the decision, what the kernel does around it),
// bounded at 10 µs. cpu-authz/plain is the ratio of the same sums;
// cpu-authz/permit-all sets the policy file against the permit-all policy:
// what deciding on eight policies adds beyond the step's fixed cost.
// median-block-ratio is the median of each round's authz/plain ratio,
// which resists a burst of other work on a shared machine better.
func BenchmarkAuthzHTTPCall(b *testing.B) {
	handlers := func(b *testing.B) []http.Handler {
		return []http.Handler{authzHTTPHandler(b, ""), authzHTTPHandler(b, permitAllPolicy), authzHTTPHandler(b, benchPolicy)}
	}
	b.Run("repeated", func(b *testing.B) {
		benchAuthzBlocks(b, handlers(b), func(int) string { return authzHTTPBody }, serveAuthzCall)
	})
	// every call's arguments differ, so that no decision is answered from
	// the memo: the worst case, a whole decision per call
	b.Run("distinct", func(b *testing.B) {
		benchAuthzBlocks(b, handlers(b), func(i int) string { return strings.Replace(authzHTTPBody, `"www"`, `"w`+strconv.Itoa(i)+`"`, 1) }, serveAuthzCall)
	})
}

// benchAuthzBlocks measures handlers (no policy first, the policy file
// last, any others between) in process CPU time over rotating blocks of
// 100 calls, each of body(i) sent by serve, and reports the metrics
// BenchmarkAuthzHTTPCall describes.
func benchAuthzBlocks(b *testing.B, handlers []http.Handler, body func(int) string, serve func(testing.TB, http.Handler, string)) {
	benchBlocks(b, "plain", "authz", handlers, body, serve)
}

// benchBlocks is benchAuthzBlocks with the arms named: base (the first
// handler) and arm (the last), in the metrics' names.
func benchBlocks(b *testing.B, base, arm string, handlers []http.Handler, body func(int) string, serve func(testing.TB, http.Handler, string)) {
	const calls = 100
	last := len(handlers) - 1
	seq := 0
	block := func(h http.Handler) time.Duration {
		bodies := make([]string, calls)
		for i := range bodies {
			bodies[i] = body(seq)
			seq++
		}
		// A collection is run before each block, outside its time, so that
		// the collector's cycles (one every few hundred calls) fall on each
		// handler in proportion to what it allocates, not on whichever
		// block a cycle happens to start in.
		runtime.GC()
		start := cpuTime()
		for _, q := range bodies {
			serve(b, h, q)
		}
		return cpuTime() - start
	}
	for range 10 {
		for _, h := range handlers {
			block(h)
		}
	}
	sum := make([]time.Duration, len(handlers))
	var ratios []float64
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		t := make([]time.Duration, len(handlers))
		for k := range handlers { // each round starts with another handler
			j := (i + k) % len(handlers)
			t[j] = block(handlers[j])
		}
		for j := range sum {
			sum[j] += t[j]
		}
		ratios = append(ratios, float64(t[last])/float64(max(t[0], 1)))
	}
	n := float64(b.N * calls)
	slices.Sort(ratios)
	b.ReportMetric(float64(sum[0].Nanoseconds())/n, base+"-cpu-ns/call")
	b.ReportMetric(float64(sum[last].Nanoseconds())/n, arm+"-cpu-ns/call")
	b.ReportMetric(float64((sum[last]-sum[0]).Nanoseconds())/n, "step-cpu-ns/call")
	b.ReportMetric(float64(sum[last])/float64(sum[0]), "cpu-"+arm+"/"+base)
	b.ReportMetric(ratios[len(ratios)/2], "median-block-ratio")
	if last > 1 {
		b.ReportMetric(float64(sum[last])/float64(sum[1]), "cpu-"+arm+"/permit-all")
	}
}

// BenchmarkAuthzHTTPOne runs one of BenchmarkAuthzHTTPCall's handlers
// alone (no policy, permit-all, the eight-policy file; repeated or
// distinct calls), for a profile or an instruction count of one path,
// e.g. the authorization step's instructions per call under callgrind
// (docs/performance.md, "Authorization").
func BenchmarkAuthzHTTPOne(b *testing.B) {
	for _, h := range []struct{ name, policy string }{{"plain", ""}, {"permit-all", permitAllPolicy}, {"policy", benchPolicy}} {
		for _, distinct := range []bool{false, true} {
			name := h.name + "/repeated"
			if distinct {
				name = h.name + "/distinct"
			}
			b.Run(name, func(b *testing.B) {
				hd := authzHTTPHandler(b, h.policy)
				body := func(i int) string {
					if distinct {
						return strings.Replace(authzHTTPBody, `"www"`, `"w`+strconv.Itoa(i)+`"`, 1)
					}
					return authzHTTPBody
				}
				bodies := make([]string, 4096)
				for i := range bodies {
					bodies[i] = body(i)
				}
				for i := range 1000 {
					serveAuthzCall(b, hd, bodies[i%len(bodies)])
				}
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; b.Loop(); i++ {
					serveAuthzCall(b, hd, bodies[i%len(bodies)])
				}
			})
		}
	}
}

// TestAuthzStepAllocationsBounded: a call with the eight-policy file in
// force allocates at most 16 more times than without a policy when the
// memo answers its decision (repeated), and at most 48 more when cedar-go
// decides it afresh (distinct: the request's context and entities, Cedar's
// diagnostic, the memo's entry), so that BenchmarkAuthzHTTPCall's
// collections stay proportionate.
func TestAuthzStepAllocationsBounded(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("allocation counts (not under the race detector)")
	}
	plain, policy := authzHTTPHandler(t, ""), authzHTTPHandler(t, benchPolicy)
	for _, distinct := range []bool{false, true} {
		n := 0
		body := func() string {
			n++
			if !distinct {
				return authzHTTPBody
			}
			return strings.Replace(authzHTTPBody, `"www"`, `"w`+strconv.Itoa(n)+`"`, 1)
		}
		for range 2000 { // warm: caches, memo, pools
			serveAuthzCall(t, plain, body())
			serveAuthzCall(t, policy, body())
		}
		a, b := allocsPerCall(func() { serveAuthzCall(t, plain, body()) }), allocsPerCall(func() { serveAuthzCall(t, policy, body()) })
		bound := 16.0
		if distinct {
			bound = 48
		}
		t.Logf("distinct=%v: %.2f allocations per call with the policy file, %.2f without", distinct, b, a)
		if b > a+bound {
			t.Errorf("distinct=%v: %.2f allocations per call with the policy file, %.2f without (bound: +%.0f)", distinct, b, a, bound)
		}
	}
}

// allocsPerCall is the mean number of allocations of f over 2,000 runs.
func allocsPerCall(f func()) float64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 2000 {
		f()
	}
	runtime.ReadMemStats(&after)
	return float64(after.Mallocs-before.Mallocs) / 2000
}
