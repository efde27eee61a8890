package vdb_test

import (
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/bulwarkmcp/bulwark/internal/fake/vdbapi"
	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/mcptest"
	"github.com/bulwarkmcp/bulwark/kernel/upstream"
	"github.com/bulwarkmcp/bulwark/servers/vdb"
)

// TestCallDeadline: one tool call takes at most its deadline (45 s by
// default), every attempt and every wait before a retry included, whatever
// the upstream does: slow failures that invite retries (503s of 28 s each,
// which took three attempts and about 85 s), and slow 429s whose
// Retry-After invites another. The call ends at the deadline with a
// timeout that says so. A reset a day or more away is reported as unknown.
// It runs in a testing/synctest bubble against the fake in memory: the
// clock is the bubble's, and the test never sleeps.
func TestCallDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, setup{fopts: &vdbapi.Options{InMemory: true}, http: &upstream.Options{}})
		args := map[string]any{"id": vdbapi.Log4Shell}
		start := time.Now()
		f.ok(t, "vdb_kev_status", args)
		if d := time.Since(start); d != 0 {
			t.Fatalf("a plain call took %v of bubble time", d)
		}
		for name, fault := range map[string]vdbapi.Fault{
			"slow 503s": {Kind: vdbapi.FaultError, Status: 503, Delay: 28 * time.Second},
			"slow 429s": {Kind: vdbapi.FaultRateLimited, Delay: 20 * time.Second, RetryAfterSecs: 10},
		} {
			f.fake.ClearFaults()
			fault.PathPrefix = "/v2/vuln/"
			f.fake.AddFault(fault)
			start := time.Now()
			text := mcptest.Text(f.call(t, "vdb_workarounds", args))
			if d := time.Since(start); d != vdb45 || !strings.Contains(text, "Error (timeout)") {
				t.Fatalf("%s: the call took %v, want its deadline %v, and answered:\n%s", name, d, vdb45, text)
			}
			contains(t, text, "deadline of 45s")
		}
		short := newFixture(t, setup{fopts: &vdbapi.Options{InMemory: true}, http: &upstream.Options{},
			cfg: vdb.Config{CallTimeout: 20 * time.Second}})
		short.fake.AddFault(vdbapi.Fault{Kind: vdbapi.FaultError, Status: 503, Delay: 28 * time.Second})
		start = time.Now()
		contains(t, short.fails(t, "vdb_workarounds", args, kernel.Timeout), "deadline of 20s")
		if d := time.Since(start); d != 20*time.Second {
			t.Fatalf("a configured deadline of 20s: the call took %v", d)
		}
		f.fake.ClearFaults()
		f.fake.AddFault(vdbapi.Fault{Kind: vdbapi.FaultRateLimited, RetryAfter: vdbapi.RetryAfterAbsent, Reset: "9223372036854775807"})
		text := f.fails(t, "vdb_advisories", args, kernel.RateLimited)
		contains(t, text, "When it resets is unknown")
		lacks(t, text, "9223372036")
	})
}

// vdb45 is the default call deadline.
const vdb45 = 45 * time.Second
