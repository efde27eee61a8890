package vdb_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/bulwarkmcp/bulwark/internal/fake/vdbapi"
	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/mcptest"
)

// start begins a sign-in and returns the grant handle and the user code.
func (f *fixture) start(t *testing.T) (string, string) {
	t.Helper()
	res := f.call(t, "vdb_auth_start", nil)
	if res.IsError {
		t.Fatal(mcptest.Text(res))
	}
	var out struct {
		Grant, UserCode, VerificationURI string
	}
	mcptest.Structured(t, res, &out)
	for _, g := range f.fake.Issued() {
		lacks(t, mcptest.Text(res), g.DeviceCode)
	}
	if out.Grant == "" || out.UserCode == "" || !strings.HasPrefix(out.VerificationURI, f.fake.SiteURL()) {
		t.Fatalf("start: %s", mcptest.Text(res))
	}
	return out.Grant, out.UserCode
}

func (f *fixture) tokenCalls() int {
	n := 0
	for _, r := range f.fake.Requests() {
		if r.Host == vdbapi.HostSite && strings.HasSuffix(r.Path, "/token") {
			n++
		}
	}
	return n
}

func (f *fixture) poll(t *testing.T, grant string) map[string]any {
	t.Helper()
	return f.ok(t, "vdb_auth_poll", map[string]any{"grant": grant})
}

// TestDeviceSignIn runs the whole device grant through the MCP client: the
// interval is enforced here, the key is stored and never shown, data tools
// then use it, a replay is refused, and sign-out removes it.
func TestDeviceSignIn(t *testing.T) {
	f := newFixture(t, setup{noKey: true})
	f.fails(t, "vdb_kev_status", map[string]any{"id": vdbapi.Log4Shell}, kernel.Unauthenticated)
	grant, code := f.start(t)

	if st := f.poll(t, grant); st["status"] != "pending" {
		t.Fatalf("early poll: %v", st)
	}
	if n := f.tokenCalls(); n != 0 {
		t.Fatalf("a poll before the interval reached /token (%d calls)", n)
	}
	f.clock.Advance(5 * time.Second)
	if st := f.poll(t, grant); st["status"] != "pending" {
		t.Fatalf("pending poll: %v", st)
	}
	if n := f.tokenCalls(); n != 1 {
		t.Fatalf("%d /token calls, want 1", n)
	}
	key := f.fake.AddKey(vdbapi.OrgB, "secret-b")
	if err := f.fake.ApproveDevice(code, key); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(5 * time.Second)
	res := f.call(t, "vdb_auth_poll", map[string]any{"grant": grant})
	text := mcptest.Text(res)
	if res.IsError || !strings.Contains(text, "signed_in") || !strings.Contains(text, "vdb_auth_logout") {
		t.Fatalf("approved poll: %s", text)
	}
	_, hex, _ := strings.Cut(key, ":")
	lacks(t, text, key, hex, vdbapi.OrgB)

	f.fake.ResetRequests()
	out := f.ok(t, "vdb_kev_status", map[string]any{"id": vdbapi.Log4Shell})
	if r := f.fake.Requests()[0]; r.Org != vdbapi.OrgB || r.Scheme != "ApiKey" {
		t.Fatalf("the stored key was not used: %+v", r)
	}
	b, _ := json.Marshal(out)
	lacks(t, string(b), hex)

	f.clock.Advance(5 * time.Second)
	f.fails(t, "vdb_auth_poll", map[string]any{"grant": grant}, kernel.FailedPrecondition)
	if n := f.tokenCalls(); n != 0 {
		t.Fatalf("a replayed grant reached /token")
	}
	if out := f.ok(t, "vdb_auth_logout", nil); out["status"] != "signed_out" {
		t.Fatalf("logout: %v", out)
	}
	f.fails(t, "vdb_kev_status", map[string]any{"id": vdbapi.Log4Shell}, kernel.Unauthenticated)
}

// TestGrantHandlesRefused: a handle that is tampered with, sealed for
// another principal or another purpose, or expired, is refused with a clear
// tool error, and never reaches /token.
func TestGrantHandlesRefused(t *testing.T) {
	f := newFixture(t, setup{noKey: true})
	grant, _ := f.start(t)
	f.clock.Advance(5 * time.Second)
	dc := f.fake.Issued()[0].DeviceCode
	body, _ := json.Marshal(map[string]any{"dc": dc, "iv": 5})
	other, err := f.sealer.SealFor("device-grant", "mallory", body, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	purpose, err := f.sealer.SealFor("vdb-key-at-rest", "local", body, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	b := []byte(grant)
	b[len(b)/2] ^= 1
	if b[len(b)/2] == '-' || b[len(b)/2] == '_' {
		b[len(b)/2] = 'A'
	}
	for name, h := range map[string]string{"tampered": string(b), "other principal": other, "other purpose": purpose,
		"truncated": grant[:len(grant)-4], "garbage": "not-a-handle"} {
		text := f.fails(t, "vdb_auth_poll", map[string]any{"grant": h}, kernel.InvalidArgument)
		if !strings.Contains(text, "not one this server issued to you") {
			t.Errorf("%s: %s", name, text)
		}
	}
	f.clock.Advance(6 * time.Minute)
	text := f.fails(t, "vdb_auth_poll", map[string]any{"grant": grant}, kernel.FailedPrecondition)
	contains(t, text, "expired", "vdb_auth_start")
	if n := f.tokenCalls(); n != 0 {
		t.Fatalf("%d refused handles reached /token", n)
	}
}

// TestPollHonoursSlowDownAndEndings: slow_down raises the interval by 5 s
// and is enforced here; access_denied and expired_token end the grant.
func TestPollHonoursSlowDownAndEndings(t *testing.T) {
	f := newFixture(t, setup{noKey: true})
	grant, code := f.start(t)
	if err := f.fake.ScriptDevice(code, vdbapi.StepSlowDown); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(5 * time.Second)
	st := f.poll(t, grant)
	if st["status"] != "pending" || st["retryAfterSeconds"] != float64(10) {
		t.Fatalf("slow_down: %v", st)
	}
	f.clock.Advance(5 * time.Second)
	f.poll(t, grant)
	if n := f.tokenCalls(); n != 1 {
		t.Fatalf("the raised interval was not enforced: %d /token calls", n)
	}
	f.clock.Advance(5 * time.Second)
	if err := f.fake.DenyDevice(code); err != nil {
		t.Fatal(err)
	}
	f.fails(t, "vdb_auth_poll", map[string]any{"grant": grant}, kernel.PermissionDenied)
	f.clock.Advance(10 * time.Second)
	f.fails(t, "vdb_auth_poll", map[string]any{"grant": grant}, kernel.FailedPrecondition)

	grant2, code2 := f.start(t)
	if err := f.fake.ExpireDevice(code2); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(5 * time.Second)
	f.fails(t, "vdb_auth_poll", map[string]any{"grant": grant2}, kernel.FailedPrecondition)
}
