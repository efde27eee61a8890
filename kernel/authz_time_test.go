package kernel_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/audit"
	"github.com/bulwarkmcp/bulwark/kernel/authz"
	"github.com/bulwarkmcp/bulwark/kernel/mcptest"
)

// TestAuthzTimeIsTheCallsTime: the time a policy reads (context.time) is
// the call's own, the one its audit record carries, not a second reading
// of the clock. The clock here moves 100 s at every reading: a server with
// a permit-all policy finds which reading a call's record gets, and a
// policy that permits only at that second lets the same call through on a
// server with a fresh clock.
func TestAuthzTimeIsTheCallsTime(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	serve := func(policy string) (allowed bool, rec audit.Record) {
		pf := filepath.Join(t.TempDir(), "p.cedar")
		if err := os.WriteFile(pf, []byte(policy), 0o600); err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		readings := 0
		var log mcptest.AuditLog
		tool := kernel.NewTool(kernel.Spec[itemArgs, map[string]string]{Name: "get_item", Description: "Read an item.", Policy: readPolicy,
			Handle: func(context.Context, *kernel.Call, itemArgs) (map[string]string, error) {
				return map[string]string{"ok": "yes"}, nil
			}})
		srv, err := kernel.New(kernel.Info{Name: "t", Version: "v0"}, []kernel.Tool{tool}, &kernel.Options{
			Authz: &authz.Config{PolicyFile: pf},
			Now: func() time.Time {
				mu.Lock()
				defer mu.Unlock()
				readings++
				return t0.Add(time.Duration(readings) * 100 * time.Second)
			},
			Audit: &log,
		})
		if err != nil {
			t.Fatal(err)
		}
		sess := mcptest.Connect(t, srv, nil)
		res := sess.Call(t, "get_item", map[string]any{"zone": "example.com", "name": "www"})
		records := log.Records()
		if len(records) != 1 {
			t.Fatalf("%d audit records", len(records))
		}
		return !res.IsError, records[0]
	}
	ok, rec := serve(`@id("all") permit(principal, action, resource);`)
	if !ok || rec.Authz != "allow" {
		t.Fatalf("permit-all refused the call: %+v", rec)
	}
	at := strconv.FormatInt(rec.Time.Unix(), 10)
	ok, rec2 := serve(`@id("at-the-call") permit(principal, action, resource) when { context.time == ` + at + ` };`)
	if !ok || rec2.Authz != "allow" || len(rec2.AuthzPolicies) != 1 || rec2.AuthzPolicies[0] != "at-the-call" {
		t.Fatalf("the policy saw another time than the call's (%s): %+v", at, rec2)
	}
	if !rec2.Time.Equal(rec.Time) {
		t.Fatalf("the clock was read differently: %v, then %v", rec.Time, rec2.Time)
	}
}
