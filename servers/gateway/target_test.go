package gateway_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
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
// key per principal named ("key-of-<name>-0123456789abcdef"), sets f.url
// to its endpoint, and returns a client session for each.
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
	f.url = endpoint
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
		if tool == "fake.stat_any" { // an array of strings: every one is a target
			wantError(t, f.sess.Call(t, tool, map[string]any{"path": []any{"/tmp/a", "/etc/passwd"}}), "permission_denied")
		}
		for _, args := range []map[string]any{{}, {"path": nil}, {"path": 7}, {"path": []any{"/tmp/a", 7}}, {"path": []any{}}, {"path": map[string]any{"p": "/etc/passwd"}}} {
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
	u.TargetArgs = map[string]gateway.ArgNames{"echo": {"path"}}
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
	// A tool whose schema does not declare the argument relays it canonical.
	if res := f.sess.Call(t, "fake.whoami", map[string]any{"path": "/tmp/../x", "n": 1}); res.IsError || !strings.Contains(text(res), `arguments: {"n":1,"path":"/x"}`) {
		t.Fatalf("whoami: %s", text(res))
	}
}

// homes lets each principal act on its own directory under /srv, and no
// one on /etc.
const homes = `@id("alice-home") permit(principal == User::"alice", action, resource is Gateway::Target) when { resource.value like "/srv/alice/*" };
@id("bob-home") permit(principal == User::"bob", action, resource is Gateway::Target) when { resource.value like "/srv/bob/*" };
@id("no-etc") forbid(principal, action, resource is Gateway::Target) when { resource.value like "/etc/*" };`

// A path is authorized in canonical form, and the upstream receives that
// form: ".." cannot walk out of the directory a policy names, and no
// spelling of /etc escapes the forbid.
func TestPathTargetIsCanonicalBeforeTheDecision(t *testing.T) {
	f := newFixture(t, options{kopts: policyFile(t, homes)})
	p := principals(t, f, "alice", "bob")
	alice := p["alice"]
	for _, path := range []string{"/srv/alice/../bob/secret.txt", "/srv/alice/./../bob/secret.txt", "/srv/alice//..//bob/secret.txt", "/srv/bob/secret.txt"} {
		wantError(t, alice.Call(t, "fake.read_text_file", map[string]any{"path": path}), "permission_denied")
	}
	res := alice.Call(t, "fake.read_text_file", map[string]any{"path": "/srv/alice/./notes//x/../todo.txt"})
	if res.IsError || !strings.Contains(text(res), `arguments: {"path":"/srv/alice/notes/todo.txt"}`) {
		t.Fatalf("the upstream did not receive the canonical path: %s", text(res))
	}

	everyone := policyFile(t, forbidEtc)
	g := newFixture(t, options{kopts: everyone})
	for _, path := range []string{"/etc/hostname", "/tmp/../etc/hostname", "//etc/hostname", "/./etc/hostname", "/etc/./hostname", "/etc//hostname", "/srv/x/../../etc/shadow"} {
		wantError(t, g.sess.Call(t, "fake.read_text_file", map[string]any{"path": path}), "permission_denied")
	}
	// What has no canonical form is refused before the decision.
	for _, path := range []string{"/../etc/hostname", "/tmp/../../etc/hostname", "etc/hostname", "./etc/hostname", "~/x", "", "C:\\etc\\hostname",
		"/tmp\\..\\etc\\hostname", "/tmp/%2e%2e/etc/hostname", "/etc%2fhostname", "/tmp/x\x00/../../etc/hostname", "/tmp/\x1b[2J", "/tmp/\u0085x",
		"/tmp/.../x", "/tmp/.. /etc", "/" + strings.Repeat("a", 4096)} {
		res := g.sess.Call(t, "fake.read_text_file", map[string]any{"path": path})
		wantError(t, res, "invalid_argument")
		if strings.Contains(text(res), "arguments:") {
			t.Fatalf("%q reached the upstream: %s", path, text(res))
		}
	}
	if res := g.sess.Call(t, "fake.read_text_file", map[string]any{"path": "/tmp/100%/x"}); res.IsError {
		t.Fatalf("a %% that encodes nothing: %s", text(res))
	}
}

// Roots confine every path target of an upstream, after canonicalization
// and before any call, with or without a policy.
func TestRootsConfinePathTargets(t *testing.T) {
	u := fakeUpstream()
	u.Roots = []string{"/srv/share", "/tmp"}
	f := newFixture(t, options{cfg: gateway.Config{Upstreams: []gateway.Upstream{u}}})
	for _, path := range []string{"/etc/hostname", "/srv/share/../../etc/hostname", "/srv/shared/x", "/srv", "/"} {
		res := f.sess.Call(t, "fake.read_text_file", map[string]any{"path": path})
		wantError(t, res, "permission_denied")
		if strings.Contains(text(res), "arguments:") {
			t.Fatalf("%q reached the upstream: %s", path, text(res))
		}
	}
	res := f.sess.Call(t, "fake.delete_file", map[string]any{"path": "/srv/share/../../etc/passwd"})
	wantError(t, res, "permission_denied") // no token for a call that cannot run
	for _, path := range []string{"/srv/share", "/srv/share/a/../b.txt", "/tmp/x"} {
		if res := f.sess.Call(t, "fake.read_text_file", map[string]any{"path": path}); res.IsError {
			t.Fatalf("%q: %s", path, text(res))
		}
	}
	for _, roots := range [][]string{{"srv"}, {"/srv/"}, {"/srv/../etc"}, {""}} {
		bad := fakeUpstream()
		bad.Roots = roots
		if _, err := gateway.New(gateway.Config{Upstreams: []gateway.Upstream{bad}}, gateway.Deps{}); err == nil || !strings.Contains(err.Error(), "roots") {
			t.Errorf("roots %q: %v", roots, err)
		}
	}
}

// A url target is decided, bound and relayed in canonical form.
func TestURLTargetIsCanonical(t *testing.T) {
	u := fakeUpstream()
	u.TargetArgs = map[string]gateway.ArgNames{"fetch_url": {"url"}}
	f := newFixture(t, options{cfg: gateway.Config{Upstreams: []gateway.Upstream{u}}, kopts: policyFile(t, `permit(principal, action, resource);
forbid(principal, action, resource is Gateway::Target) when { resource.value like "https://internal.example/*" };`)})
	for _, url := range []string{"https://internal.example/admin", "HTTPS://Internal.EXAMPLE:443/a/../admin", "https://internal.example./admin",
		"https://internal.example/%61dmin", "https://internal.example/x/%2e%2e/admin", "https://internal.example"} {
		wantError(t, f.sess.Call(t, "fake.fetch_url", map[string]any{"url": url}), "permission_denied")
	}
	for _, url := range []string{"https://user@internal.example/", "https://evil.example\\@internal.example/", "//internal.example/", "internal.example/admin",
		"https://internal.example/a b", "https://internal.example/%zz", "https://internal.example:x/", "https://bücher.example/", "mailto:a@internal.example",
		"https://127.1/", "https://2130706433/", "https://[::ffff:7f00:1]/", "https://internal!.example/"} {
		res := f.sess.Call(t, "fake.fetch_url", map[string]any{"url": url})
		wantError(t, res, "invalid_argument")
		if strings.Contains(text(res), "arguments:") {
			t.Fatalf("%q reached the upstream: %s", url, text(res))
		}
	}
	for in, want := range map[string]string{"HTTP://Example.COM:80/a/./b/../c?q=%7e%2f#F": "http://example.com/a/c?q=~%2F#F", "https://[0:0::1]:443": "https://[::1]/"} {
		res := f.sess.Call(t, "fake.fetch_url", map[string]any{"url": in})
		if res.IsError || !strings.Contains(text(res), `arguments: {"url":"`+want+`"}`) {
			t.Fatalf("the upstream did not receive the canonical URL %s: %s", want, text(res))
		}
	}
}

// The confirmation's summary, the consent question and the token's binding
// name the canonical target; the confirmed call relays it.
func TestConfirmationNamesTheCanonicalTarget(t *testing.T) {
	f := newFixture(t, options{})
	args := map[string]any{"path": "/tmp/../srv/./data//old.txt"}
	res := f.sess.Call(t, "fake.delete_file", args)
	wantError(t, res, "confirmation_required")
	if !strings.Contains(text(res), `acting on path "/srv/data/old.txt"`) || strings.Contains(text(res), "/tmp/..") {
		t.Fatalf("the refusal does not name the canonical target: %s", text(res))
	}
	tok := mcptest.ConfirmToken(t, res)
	// The same target spelled another way is the same call.
	res = f.sess.Call(t, "fake.delete_file", map[string]any{"path": "/srv/data/old.txt", "confirmToken": tok})
	if res.IsError || !strings.Contains(text(res), "deleted /srv/data/old.txt") {
		t.Fatalf("the confirmed call: %s", text(res))
	}

	var asked []string
	var mu sync.Mutex
	e := newFixture(t, options{client: &mcp.ClientOptions{ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		mu.Lock()
		asked = append(asked, r.Params.Message)
		mu.Unlock()
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}, nil
	}}})
	res = e.sess.Call(t, "fake.delete_file", args)
	if res.IsError || !strings.Contains(text(res), "deleted /srv/data/old.txt") {
		t.Fatalf("the call confirmed by elicitation: %s", text(res))
	}
	mu.Lock()
	defer mu.Unlock()
	if len(asked) != 1 || !strings.Contains(asked[0], "\nTarget: path \"/srv/data/old.txt\"\n") ||
		!strings.Contains(asked[0], "\n  path: /srv/data/old.txt\n") || strings.Contains(asked[0], "/tmp/..") {
		t.Fatalf("the consent question: %q", asked)
	}
}

// fsUpstream is the fake with server-filesystem's multi-target tools
// configured as the documentation recommends.
func fsUpstream() gateway.Upstream {
	u := fakeUpstream()
	u.TargetArgs = map[string]gateway.ArgNames{"move_file": {"source", "destination"}, "read_multiple_files": {"paths"}}
	return u
}

// Every target of a call is canonical and authorized: one forbidden path
// among allowed ones denies the call, and a move into another principal's
// directory is denied whichever argument names it.
func TestEveryTargetIsAuthorized(t *testing.T) {
	f := newFixture(t, options{cfg: gateway.Config{Upstreams: []gateway.Upstream{fsUpstream()}}, kopts: policyFile(t, homes)})
	alice := principals(t, f, "alice")["alice"]
	for _, paths := range [][]any{{"/srv/alice/a.txt", "/srv/bob/secret.txt"}, {"/srv/alice/a.txt", "/srv/alice/../bob/secret.txt"}, {"/srv/bob/secret.txt", "/srv/alice/a.txt"}} {
		wantError(t, alice.Call(t, "fake.read_multiple_files", map[string]any{"paths": paths}), "permission_denied")
	}
	res := alice.Call(t, "fake.read_multiple_files", map[string]any{"paths": []any{"/srv/alice/a.txt", "/srv/alice/x/../b.txt"}})
	if res.IsError || !strings.Contains(text(res), `arguments: {"paths":["/srv/alice/a.txt","/srv/alice/b.txt"]}`) {
		t.Fatalf("read_multiple_files: %s", text(res))
	}
	for _, mv := range []map[string]any{
		{"source": "/srv/alice/a.txt", "destination": "/srv/bob/a.txt"},
		{"source": "/srv/alice/a.txt", "destination": "/srv/alice/../bob/a.txt"},
		{"source": "/srv/bob/secret.txt", "destination": "/srv/alice/stolen.txt"},
	} {
		wantError(t, alice.Call(t, "fake.move_file", mv), "permission_denied")
	}
	mv := map[string]any{"source": "/srv/alice/./a.txt", "destination": "/srv/alice//b.txt"}
	res = alice.Call(t, "fake.move_file", mv)
	wantError(t, res, "confirmation_required")
	if !strings.Contains(text(res), `acting on source "/srv/alice/a.txt" and destination "/srv/alice/b.txt"`) {
		t.Fatalf("the refusal does not name both targets: %s", text(res))
	}
	tok := mcptest.ConfirmToken(t, res)
	other := map[string]any{"source": "/srv/alice/a.txt", "destination": "/srv/alice/c.txt", "confirmToken": tok}
	wantError(t, alice.Call(t, "fake.move_file", other), "confirmation_required") // the token is bound to both
	res = alice.Call(t, "fake.move_file", map[string]any{"source": "/srv/alice/a.txt", "destination": "/srv/alice/b.txt", "confirmToken": mcptest.ConfirmToken(t, alice.Call(t, "fake.move_file", mv))})
	if res.IsError || !strings.Contains(text(res), `arguments: {"destination":"/srv/alice/b.txt","source":"/srv/alice/a.txt"}`) {
		t.Fatalf("the confirmed move: %s", text(res))
	}
	var allowed int
	for _, r := range f.records() {
		if r.Tool == "fake.move_file" && r.Authz == "allow" && r.Outcome == "ok" {
			allowed++
			if r.Attrs["authz_targets"] != "2" || len(r.AuthzPolicies) != 1 || r.AuthzPolicies[0] != "alice-home" {
				t.Errorf("the audit record of the move: %+v", r)
			}
		}
	}
	if allowed != 1 {
		t.Fatalf("%d audited moves", allowed)
	}
}

// A call names at most 256 targets: each costs a decision.
func TestTargetsPerCallAreBounded(t *testing.T) {
	f := newFixture(t, options{cfg: gateway.Config{Upstreams: []gateway.Upstream{fsUpstream()}}, kopts: policyFile(t, forbidEtc)})
	paths := make([]any, 257)
	for i := range paths {
		paths[i] = fmt.Sprintf("/tmp/%d", i)
	}
	res := f.sess.Call(t, "fake.read_multiple_files", map[string]any{"paths": paths})
	wantError(t, res, "invalid_argument")
	if !strings.Contains(text(res), "more than 256 targets") {
		t.Fatalf("%s", text(res))
	}
	if res := f.sess.Call(t, "fake.read_multiple_files", map[string]any{"paths": paths[:256]}); res.IsError {
		t.Fatalf("256 targets: %s", text(res))
	}
}
