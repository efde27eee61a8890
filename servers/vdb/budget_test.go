package vdb_test

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bulwarkmcp/bulwark/internal/fake/vdbapi"
	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/mcptest"
	"github.com/bulwarkmcp/bulwark/servers/vdb"
)

// Hostile answers of the budget tests: about a million values in just
// under 3 MiB, and just under the budget in 1.2 MB.
const (
	wideID  = "CVE-2099-1001"
	underID = "CVE-2099-1002"
	// underSize is the size of {"cwe":[{},…]} with MaxDecodeValues-10
	// values: 3 for the object, its key and the array, 3 bytes per {}.
	underSize = 3*(vdb.MaxDecodeValues-13) + 9
)

// TestDecodeBudget: an answer of about a million values ({"cwe":[{},{},…]},
// just under 3 MiB) is refused with resource_exhausted by every tool that
// reads it, before anything is decoded — each call allocates a small
// multiple of the body, not the ~140 MB its values would build — and it is
// never cached; so is an answer nested deeper than the budget. An answer
// just under the budget is decoded.
func TestDecodeBudget(t *testing.T) {
	f := newFixture(t, setup{})
	f.fake.AddFault(vdbapi.Fault{Kind: vdbapi.FaultWide, PathPrefix: "/v2/vuln/" + wideID})
	f.fake.AddFault(vdbapi.Fault{Kind: vdbapi.FaultWide, Size: underSize, PathPrefix: "/v2/vuln/" + underID})
	f.fake.AddFault(vdbapi.Fault{Kind: vdbapi.FaultRaw, ContentType: "application/json", PathPrefix: "/v2/vuln/CVE-2099-1003",
		Body: strings.Repeat("[", vdb.MaxDecodeDepth+1) + strings.Repeat("]", vdb.MaxDecodeDepth+1)})
	calls := []struct {
		tool string
		args map[string]any
	}{
		{"vdb_vuln", map[string]any{"id": wideID}},
		{"vdb_vuln", map[string]any{"id": wideID, "detail": "full"}},
		{"vdb_vuln", map[string]any{"id": wideID, "detail": "raw"}},
		{"vdb_kev_status", map[string]any{"id": wideID}},
		{"vdb_request", map[string]any{"path": "/vuln/" + wideID}},
		{"vdb_vuln", map[string]any{"id": wideID}}, // again: nothing was cached
		{"vdb_vuln", map[string]any{"id": "CVE-2099-1003", "detail": "full"}},
	}
	for _, c := range calls {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		text := f.fails(t, c.tool, c.args, kernel.ResourceExhausted)
		runtime.ReadMemStats(&after)
		contains(t, text, strconv.Itoa(vdb.MaxDecodeValues)+" JSON values")
		alloc := after.TotalAlloc - before.TotalAlloc
		t.Logf("%s %v: refused, %.1f MB allocated in the process", c.tool, c.args, float64(alloc)/1e6)
		if alloc > 32<<20 {
			t.Errorf("%s %v allocated %d MB for a refused answer", c.tool, c.args, alloc>>20)
		}
	}
	if n := f.apiCalls(); n != len(calls) {
		t.Fatalf("%d upstream requests for %d calls: a refused answer was cached", n, len(calls))
	}
	if out := f.ok(t, "vdb_vuln", map[string]any{"id": underID}); out["cwe"] == nil {
		t.Fatalf("an answer within the budget: %v", out)
	}
}

// TestHostileCallersBoundedMemory is the memory bound: 20 concurrent
// callers asking for hostile answers — ten for the million-value answer,
// ten for one just under the budget, decoded (and, after the first,
// re-decoded from the cache) on every call — keep the process's peak
// resident set (VmHWM, the whole test process: server, kernel, MCP client
// and fake) under 256 MiB, and a normal call beside them (vdb_vex, never
// cached) answers within 2× its median time without them. It measures, so
// it runs on Linux, without the race detector, and not with -short.
func TestHostileCallersBoundedMemory(t *testing.T) {
	if raceEnabled || testing.Short() {
		t.Skip("a memory bound: measured without the race detector, and not with -short")
	}
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		t.Skipf("cannot reset the peak resident set (Linux only): %v", err)
	}
	f := newFixture(t, setup{})
	f.fake.AddFault(vdbapi.Fault{Kind: vdbapi.FaultWide, PathPrefix: "/v2/vuln/" + wideID})
	f.fake.AddFault(vdbapi.Fault{Kind: vdbapi.FaultWide, Size: underSize, PathPrefix: "/v2/vuln/" + underID})
	normal := func() time.Duration {
		start := time.Now()
		f.ok(t, "vdb_vex", map[string]any{"id": vdbapi.Log4Shell})
		return time.Since(start)
	}
	median := func(n int) time.Duration {
		ds := make([]time.Duration, n)
		for i := range ds {
			ds[i] = normal()
		}
		slices.Sort(ds)
		return ds[n/2]
	}
	median(5) // warm: the upstream connection, the schema caches
	base := median(31)
	runtime.GC()
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		t.Fatal(err)
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	var hostile, refused atomic.Int64
	for i := range 20 {
		id := wideID
		if i%2 == 1 {
			id = underID
		}
		sess := mcptest.Connect(t, f.kern, nil) // each caller its own client
		wg.Go(func() {
			for !stop.Load() {
				res := sess.Call(t, "vdb_vuln", map[string]any{"id": id})
				hostile.Add(1)
				if res.IsError {
					refused.Add(1)
				}
			}
		})
	}
	time.Sleep(200 * time.Millisecond) // let the hostile calls get going
	loaded := median(31)
	stop.Store(true)
	wg.Wait()
	hwm := peakRSS(t)
	t.Logf("peak RSS (VmHWM) %d MiB; normal call median %v alone, %v beside 20 hostile callers (%.2f×); %d hostile calls, %d refused; GOMAXPROCS %d",
		hwm>>20, base, loaded, float64(loaded)/float64(base), hostile.Load(), refused.Load(), runtime.GOMAXPROCS(0))
	if hwm >= 256<<20 {
		t.Errorf("peak RSS %d MiB, bound 256 MiB", hwm>>20)
	}
	if loaded > 2*base {
		t.Errorf("a normal call took %v beside the hostile callers, more than 2× its %v alone", loaded, base)
	}
}

// peakRSS is the process's peak resident set since the last reset
// (VmHWM in /proc/self/status), in bytes.
func peakRSS(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			var kb int64
			if _, err := fmt.Sscan(strings.TrimSuffix(strings.TrimSpace(v), " kB"), &kb); err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmHWM in /proc/self/status")
	return 0
}
