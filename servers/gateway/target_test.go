package gateway_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/authz"
	"github.com/bulwarkmcp/bulwark/kernel/identity"
	"github.com/bulwarkmcp/bulwark/kernel/mcptest"
	"github.com/bulwarkmcp/bulwark/servers/gateway"
)

// bearer adds an API key to every request of a client.
type bearer struct{ key string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	return http.DefaultTransport.RoundTrip(r)
}

// principals serves the fixture's kernel over Streamable HTTP with one API
// key per principal named, and returns a client session for each.
func principals(t *testing.T, f *fixture, names ...string) map[string]*mcptest.Session {
	t.Helper()
	var file strings.Builder
	for _, n := range names {
		file.WriteString(identity.HashKey("key-of-"+n+"-0123456789abcdef") + " free " + n + "\n")
	}
	keys, err := identity.ParseAPIKeys(strings.NewReader(file.String()))
	if err != nil {
		t.Fatal(err)
	}
	endpoint := mcptest.ServeHTTP(t, f.ks, kernel.HTTPOptions{Auth: keys})
	out := map[string]*mcptest.Session{}
	for _, n := range names {
		tr := &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: &http.Client{Transport: bearer{"key-of-" + n + "-0123456789abcdef"}}}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: n}, nil).Connect(context.Background(), tr, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		out[n] = &mcptest.Session{ClientSession: cs}
	}
	return out
}

// policyFile writes a Cedar policy for a test and returns the kernel
// options that load it.
func policyFile(t *testing.T, policy string) kernel.Options {
	t.Helper()
	pf := filepath.Join(t.TempDir(), "policy.cedar")
	if err := os.WriteFile(pf, []byte(policy), 0o600); err != nil {
		t.Fatal(err)
	}
	return kernel.Options{Authz: &authz.Config{PolicyFile: pf}}
}

const forbidEtc = `permit(principal, action, resource);
forbid(principal, action, resource is Gateway::Target) when { resource.value like "/etc/*" };`

// A target argument whose schema types it as anything, or as a string or
// null, is still the target: the forbid holds, and a call whose target is
// absent, null or not a string is refused, never decided on the gateway
// itself (Server::"bulwark-gateway", which the first policy permits).
func TestTargetFailsClosedWhateverItsSchema(t *testing.T) {
	f := newFixture(t, options{kopts: policyFile(t, forbidEtc)})
	for _, tool := range []string{"fake.stat_any", "fake.stat_nullable"} {
		wantError(t, f.sess.Call(t, tool, map[string]any{"path": "/etc/passwd"}), "permission_denied")
		for _, args := range []map[string]any{{}, {"path": nil}, {"path": 7}, {"path": []any{"/etc/passwd"}}, {"path": map[string]any{"p": "/etc/passwd"}}} {
			if tool == "fake.stat_nullable" && len(args) == 1 && args["path"] != nil {
				continue // the schema refuses these itself
			}
			res := f.sess.Call(t, tool, args)
			wantError(t, res, "invalid_argument")
			if !strings.Contains(text(res), `"path"`) {
				t.Errorf("%s %v: the refusal does not name the argument: %s", tool, args, text(res))
			}
		}
		if res := f.sess.Call(t, tool, map[string]any{"path": "/tmp/x"}); res.IsError {
			t.Errorf("%s on /tmp/x: %s", tool, text(res))
		}
	}
	// A tool whose schema does not declare the target argument acts on the
	// gateway, unless the call carries the argument anyway.
	if res := f.sess.Call(t, "fake.whoami", map[string]any{}); res.IsError {
		t.Fatalf("whoami: %s", text(res))
	}
	wantError(t, f.sess.Call(t, "fake.whoami", map[string]any{"path": "/etc/passwd"}), "permission_denied")
	wantError(t, f.sess.Call(t, "fake.whoami", map[string]any{"path": false}), "invalid_argument")
}

// Without an authorization policy the same calls are refused before they
// are relayed: the upstream never receives a target it was not meant to.
func TestTargetFailsClosedWithoutAPolicy(t *testing.T) {
	u := fakeUpstream()
	u.TargetArgs = map[string]string{"echo": "path"}
	f := newFixture(t, options{cfg: gateway.Config{Upstreams: []gateway.Upstream{u}}})
	for tool, args := range map[string]map[string]any{
		"fake.stat_any":      {"path": nil},
		"fake.stat_nullable": {},
		"fake.whoami":        {"path": 7},
		"fake.echo":          {"text": "a configured target_args entry is required"},
	} {
		res := f.sess.Call(t, tool, args)
		wantError(t, res, "invalid_argument")
		if strings.Contains(text(res), "arguments:") {
			t.Errorf("%s %v reached the upstream: %s", tool, args, text(res))
		}
	}
	if res := f.sess.Call(t, "fake.stat_any", map[string]any{"path": "/tmp/x"}); res.IsError || !strings.Contains(text(res), `/tmp/x`) {
		t.Fatalf("stat_any: %s", text(res))
	}
}
