package vdb_test

import (
	"testing"
	"time"

	"github.com/bulwarkmcp/bulwark/internal/fake/vdbapi"
	"github.com/bulwarkmcp/bulwark/kernel/mcptest"
)

// TestGoldenTranscripts pins the wire form of the VDB server's security
// behaviour in testdata/transcripts/*.txtar (UPDATE_GOLDEN=1 regenerates).
func TestGoldenTranscripts(t *testing.T) {
	norm := []mcptest.Normalizer{
		mcptest.Normalize(`(grant\\?"\s*:\s*\\?")[A-Za-z0-9_-]{40,}`, `${1}<sealed-grant>`),
		mcptest.Normalize(`(userCode\\?"\s*:\s*\\?")[A-Z0-9-]+`, `${1}<user-code>`),
		mcptest.Normalize(`code=[A-Za-z0-9-]+`, `code=<user-code>`),
		mcptest.Normalize(`127\.0\.0\.1:[0-9]+`, `127.0.0.1:<port>`),
	}
	cases := []struct {
		name, comment string
		su            setup
		steps         func(t *testing.T, f *fixture)
	}{
		{"unauthenticated", "Without a credential a data tool refuses, naming every way to sign in; nothing is sent upstream.",
			setup{noKey: true}, func(t *testing.T, f *fixture) {
				f.call(t, "vdb_kev_status", map[string]any{"id": vdbapi.Log4Shell})
			}},
		{"escape_hatch_refusals", "vdb_request refuses a CLI-only route, an encoded dot-dot and a credential route before any request.",
			setup{}, func(t *testing.T, f *fixture) {
				f.call(t, "vdb_request", map[string]any{"path": "/cli.quality-gate-config"})
				f.call(t, "vdb_request", map[string]any{"path": "/vuln/%2e%2e/auth/token"})
				f.call(t, "vdb_request", map[string]any{"path": "/auth/api-key"})
			}},
		{"injected_description", "An instruction and envelope tags planted in a CVE's prose come back enveloped and neutralised.",
			setup{}, func(t *testing.T, f *fixture) {
				f.fake.SetInjection(vdbapi.Injection)
				f.call(t, "vdb_workarounds", map[string]any{"id": vdbapi.Log4Shell})
			}},
		{"rate_limited", "A used-up quota is reported with its limit and reset; the server never switches credential.",
			setup{}, func(t *testing.T, f *fixture) {
				f.fake.SetQuota(vdbapi.OrgA, 1000, 0)
				f.call(t, "vdb_kev_status", map[string]any{"id": vdbapi.Log4Shell})
			}},
		{"device_sign_in", "Sign-in: the grant is sealed; an early poll is held here; approval gives signed_in without the key; a replay is refused.",
			setup{noKey: true}, func(t *testing.T, f *fixture) {
				grant, code := f.start(t)
				f.poll(t, grant)
				if err := f.fake.ApproveDevice(code, f.fake.AddKey(vdbapi.OrgB, "secret-b")); err != nil {
					t.Fatal(err)
				}
				f.clock.Advance(5 * time.Second)
				f.poll(t, grant)
				f.clock.Advance(5 * time.Second)
				f.call(t, "vdb_auth_poll", map[string]any{"grant": grant})
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, c.su)
			f.sess.Reset()
			c.steps(t, f)
			mcptest.Golden(t, "testdata/transcripts/"+c.name+".txtar", c.comment,
				map[string]string{"wire": f.sess.Transcript(norm...)}, []string{"wire"})
		})
	}
}
