package vdb_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/internal/fake/vdbapi"
	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/identity"
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

func newHTTPFixture(t *testing.T) *httpFixture {
	t.Helper()
	f := &httpFixture{fake: vdbapi.Start(t, nil)}
	srv, err := vdb.New(vdb.Config{APIBaseURL: f.fake.APIURL(), SiteBaseURL: f.fake.SiteURL()},
		vdb.Deps{HTTP: &upstream.Options{Timeout: 5 * time.Second, Sleep: func(context.Context, time.Duration) error { return nil }}})
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
	ts := httptest.NewUnstartedServer(nil)
	h, err := k.HTTPHandler(kernel.HTTPOptions{Addr: ts.Listener.Addr().String(), Auth: keys})
	if err != nil {
		t.Fatal(err)
	}
	ts.Config.Handler = h
	ts.Start()
	t.Cleanup(ts.Close)
	f.url = ts.URL + kernel.MCPPath
	return f
}

type headerRT map[string]string

func (h headerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h {
		r.Header.Set(k, v)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// session connects as the MCP principal with mcpKey, relaying vdbCred.
func (f *httpFixture) session(t *testing.T, mcpKey, vdbCred string) *mcp.ClientSession {
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

func callHTTP(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) (map[string]any, bool) {
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

// TestCachePerPrincipal: answers are cached per principal and credential.
// Bob never sees Alice's cached (org-scoped) VEX answer — not with his own
// key, and not with a forged key naming Alice's organisation; the bulwark
// client token is never relayed upstream.
func TestCachePerPrincipal(t *testing.T) {
	f := newHTTPFixture(t)
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
