package vdb_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/internal/fake/vdbapi"
	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/identity"
	"github.com/bulwarkmcp/bulwark/kernel/mcptest"
	"github.com/bulwarkmcp/bulwark/kernel/upstream"
	"github.com/bulwarkmcp/bulwark/servers/vdb"
)

const (
	aliceMCPKey = "mcp-key-alice-0123456789abcdef0123456789"
	bobMCPKey   = "mcp-key-bob-0123456789abcdef0123456789ab"
	fwdHeader   = "X-Vulnetix-Authorization"
)

// httpFixture serves the VDB server over Streamable HTTP with API-key
// authentication and BYOK: each caller brings its Vulnetix credential in
// X-Vulnetix-Authorization, as `bulwark vdb --http --auth apikey` does.
type httpFixture struct {
	fake *vdbapi.Server
	url  string
}

func newHTTPFixture(t testing.TB) *httpFixture { return newHTTPFixtureAuth(t, true) }

// newHTTPFixtureAuth: with auth, bulwark authenticates its clients by API
// key; without, it serves loopback without authentication. Either way the
// Vulnetix credential travels in X-Vulnetix-Authorization (the kernel
// consumes and strips Authorization: no token passthrough).
func newHTTPFixtureAuth(t testing.TB, auth bool) *httpFixture {
	return newHTTPFixtureWith(t, auth, nil, vdb.Config{})
}

// newHTTPFixtureWith is newHTTPFixtureAuth with the fake's options (nil:
// defaults) and the server's configuration (its URLs are set here).
func newHTTPFixtureWith(t testing.TB, auth bool, fopts *vdbapi.Options, cfg vdb.Config) *httpFixture {
	return newHTTPFixtureDeps(t, auth, fopts, cfg, vdb.Deps{})
}

// newHTTPFixtureDeps is newHTTPFixtureWith with the server's Deps (its HTTP
// options are set here).
func newHTTPFixtureDeps(t testing.TB, auth bool, fopts *vdbapi.Options, cfg vdb.Config, deps vdb.Deps) *httpFixture {
	t.Helper()
	f := &httpFixture{fake: vdbapi.Start(t, fopts)}
	f.url = serveHTTP(t, f.fake, auth, cfg, deps)
	return f
}

// serveHTTP serves a VDB server over fake on Streamable HTTP, with API-key
// authentication (alice and bob) or, without auth, none (loopback), and
// returns its endpoint. The server's URLs and HTTP options are set here.
func serveHTTP(t testing.TB, fake *vdbapi.Server, auth bool, cfg vdb.Config, deps vdb.Deps) string {
	t.Helper()
	cfg.APIBaseURL, cfg.SiteBaseURL = fake.APIURL(), fake.SiteURL()
	deps.HTTP = &upstream.Options{Timeout: 5 * time.Second, Sleep: func(context.Context, time.Duration) error { return nil }}
	srv, err := vdb.New(cfg, deps)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := identity.ParseAPIKeys(strings.NewReader(identity.HashKey(aliceMCPKey) + " pro alice\n" + identity.HashKey(bobMCPKey) + " pro bob\n"))
	if err != nil {
		t.Fatal(err)
	}
	opts := kernel.Options{Envelope: srv.Envelope(), BYOK: true,
		Credentials: []kernel.Credential{{Name: "vdb", Provider: "Vulnetix", Header: fwdHeader}}}
	k, err := kernel.New(kernel.Info{Name: "bulwark-vdb", Version: "test"}, srv.Tools(), &opts)
	if err != nil {
		t.Fatal(err)
	}
	ho := kernel.HTTPOptions{Auth: keys}
	if !auth {
		ho.Auth = nil
	}
	return mcptest.ServeHTTP(t, k, ho)
}

type headerRT map[string]string

func (h headerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	m := headersRT{}
	for k, v := range h {
		m[k] = []string{v}
	}
	return m.RoundTrip(r)
}

// session connects as the MCP principal with mcpKey, relaying vdbCred.
func (f *httpFixture) session(t testing.TB, mcpKey, vdbCred string) *mcp.ClientSession {
	t.Helper()
	hc := &http.Client{Transport: headerRT{"Authorization": "Bearer " + mcpKey, fwdHeader: vdbCred}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: f.url, HTTPClient: hc}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func callHTTP(t testing.TB, cs *mcp.ClientSession, tool string, args map[string]any) (map[string]any, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	b, _ := json.Marshal(res.StructuredContent)
	_ = json.Unmarshal(b, &out)
	return out, res.IsError
}

// checkCachePerPrincipal: on a fresh httpFixture, Alice's org-scoped VEX
// answer is cached for her (one upstream request for two calls) and Bob,
// with his own key, gets his own answer, not hers from the cache.
func checkCachePerPrincipal(t testing.TB, f *httpFixture) {
	t.Helper()
	keyA := f.fake.AddKey(vdbapi.OrgA, "secret-a")
	keyB := f.fake.AddKey(vdbapi.OrgB, "secret-b")
	f.fake.SetVEX(vdbapi.OrgA, vdbapi.Log4Shell, "not_affected")
	f.fake.SetVEX(vdbapi.OrgB, vdbapi.Log4Shell, "affected")
	// The fake marks VEX no-store; let it be cached, to prove the keying.
	f.fake.SetCacheControl("/v2/vuln/", "private, max-age=300")
	args := map[string]any{"id": vdbapi.Log4Shell}

	alice := f.session(t, aliceMCPKey, "ApiKey "+keyA)
	first, isErr := callHTTP(t, alice, "vdb_vex", args)
	if isErr || first["cached"] != false || first["cacheScope"] != "private" {
		t.Fatalf("alice first: %v", first)
	}
	again, _ := callHTTP(t, alice, "vdb_vex", args)
	if again["cached"] != true {
		t.Fatalf("alice's second call was not cached: %v", again)
	}
	if n := len(f.fake.Requests()); n != 1 {
		t.Fatalf("%d upstream requests, want 1", n)
	}
	aliceText, _ := json.Marshal(first["items"])

	bob := f.session(t, bobMCPKey, "ApiKey "+keyB)
	b, _ := callHTTP(t, bob, "vdb_vex", args)
	bobText, _ := json.Marshal(b["items"])
	if b["cached"] != false || string(bobText) == string(aliceText) || !strings.Contains(string(bobText), "affected") {
		t.Fatalf("bob got alice's answer: %v", b)
	}
}

// TestCachePerPrincipal: answers are cached per principal and credential.
// Bob never sees Alice's cached (org-scoped) VEX answer — not with his own
// key, and not with a forged key naming Alice's organisation; the bulwark
// client token is never relayed upstream.
func TestCachePerPrincipal(t *testing.T) {
	f := newHTTPFixture(t)
	checkCachePerPrincipal(t, f)
	args := map[string]any{"id": vdbapi.Log4Shell}

	forged := f.session(t, bobMCPKey, "ApiKey "+vdbapi.OrgA+":"+strings.Repeat("0", 64))
	if out, isErr := callHTTP(t, forged, "vdb_vex", args); !isErr {
		t.Fatalf("a forged key naming alice's org was served: %v", out)
	}
	aliceForged := f.session(t, aliceMCPKey, "ApiKey "+vdbapi.OrgA+":"+strings.Repeat("0", 64))
	if out, isErr := callHTTP(t, aliceForged, "vdb_vex", args); !isErr {
		t.Fatalf("alice's cache served a wrong key: %v", out)
	}
	for _, r := range f.fake.Requests() {
		if r.Contains(aliceMCPKey) || r.Contains(bobMCPKey) {
			t.Fatalf("the MCP client's token reached the upstream: %+v", r)
		}
	}
}

// TestCacheHonoursNoStore: an answer marked no-store (the fake's VEX) is
// fetched again every time.
func TestCacheHonoursNoStore(t *testing.T) {
	f := newHTTPFixture(t)
	keyA := f.fake.AddKey(vdbapi.OrgA, "secret-a")
	alice := f.session(t, aliceMCPKey, "ApiKey "+keyA)
	for range 2 {
		if out, _ := callHTTP(t, alice, "vdb_vex", map[string]any{"id": vdbapi.Log4Shell}); out["cached"] != false {
			t.Fatalf("a no-store answer was cached: %v", out)
		}
	}
	if n := len(f.fake.Requests()); n != 2 {
		t.Fatalf("%d upstream requests, want 2", n)
	}
}

// TestRelayedAuthorization: on a loopback server without its own
// authentication, X-Vulnetix-Authorization "ApiKey …" or "Bearer …" is
// relayed as it is; a credential in the request's own Authorization header
// is never relayed (the kernel strips it), so the tool says unauthenticated.
func TestRelayedAuthorization(t *testing.T) {
	f := newHTTPFixtureAuth(t, false)
	keyA := f.fake.AddKey(vdbapi.OrgA, "secret-a")
	f.fake.AddBearer(vdbapi.OrgB, "tok-bob-0123456789")
	for cred, org := range map[string]string{"ApiKey " + keyA: vdbapi.OrgA, "Bearer tok-bob-0123456789": vdbapi.OrgB} {
		f.fake.ResetRequests()
		hc := &http.Client{Transport: headerRT{fwdHeader: cred}}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "c"}, nil).Connect(context.Background(),
			&mcp.StreamableClientTransport{Endpoint: f.url, HTTPClient: hc}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if out, isErr := callHTTP(t, cs, "vdb_kev_status", map[string]any{"id": vdbapi.Log4Shell}); isErr {
			t.Fatalf("%v", out)
		}
		if r := f.fake.Requests()[0]; r.Org != org {
			t.Fatalf("upstream resolved %q, want %q", r.Org, org)
		}
		_ = cs.Close()
	}
	f.fake.ResetRequests()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: f.url, HTTPClient: &http.Client{Transport: headerRT{"Authorization": "ApiKey " + keyA}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	out, isErr := callHTTP(t, cs, "vdb_kev_status", map[string]any{"id": vdbapi.Log4Shell})
	if !isErr || !strings.Contains(fmt.Sprint(out), "unauthenticated") {
		t.Fatalf("no credential: %v", out)
	}
	if n := len(f.fake.Requests()); n != 0 {
		t.Fatalf("the client's Authorization was relayed: %d requests", n)
	}
}

// TestCacheControlEveryLineCounts: Cache-Control sent as several header
// lines counts every line, the strictest winning: max-age on one line and
// no-store (or no-cache) on the next is never cached; two max-ages keep the
// shorter. Through the protocol, against the fake sending the lines.
func TestCacheControlEveryLineCounts(t *testing.T) {
	f := newFixture(t, setup{})
	args := map[string]any{"id": vdbapi.Log4Shell}
	for _, lines := range [][]string{{"max-age=300", "no-store"}, {"private, max-age=300", "no-cache"}, {"no-store", "max-age=300"}} {
		f.fake.SetCacheControl("/v2/vuln/", lines...)
		f.fake.ResetRequests()
		for range 2 {
			if out := f.ok(t, "vdb_kev_status", args); out["cached"] != false {
				t.Fatalf("%q: an answer the lines forbid keeping was cached: %v", lines, out)
			}
		}
		if n := f.apiCalls(); n != 2 {
			t.Fatalf("%q: %d upstream requests, want 2", lines, n)
		}
	}
	f.fake.SetCacheControl("/v2/vuln/", "max-age=3600", "max-age=10")
	f.ok(t, "vdb_workarounds", args)
	f.clock.Advance(11 * time.Second)
	if out := f.ok(t, "vdb_workarounds", args); out["cached"] != false {
		t.Fatalf("kept past the shorter max-age: %v", out)
	}
}
