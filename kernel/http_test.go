package kernel_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/audit"
	"github.com/bulwarkmcp/bulwark/kernel/identity"
	"github.com/bulwarkmcp/bulwark/kernel/ratelimit"
)

const apiKey = "k3y-for-tests-0123456789abcdef"

type httpFixture struct {
	url   string
	audit chan audit.Record
}

func newHTTPFixture(t *testing.T, limit int, byok bool) *httpFixture {
	t.Helper()
	keys, err := identity.ParseAPIKeys(strings.NewReader(identity.HashKey(apiKey) + " pro alice\n"))
	if err != nil {
		t.Fatal(err)
	}
	tiers, _ := ratelimit.NewTiers("free", "pro")
	lim, _ := ratelimit.NewLimiter(&ratelimit.LimiterOptions{Limit: limit})
	f := &httpFixture{audit: make(chan audit.Record, 100)}
	opts := kernel.Options{Tiers: tiers, Limiter: lim, BYOK: byok,
		Audit:       audit.Func(func(_ context.Context, r audit.Record) { f.audit <- r }),
		Credentials: []kernel.Credential{{Name: "upstream", Provider: "Example", Header: "X-Example-Token", Value: "configured"}}}
	tools := append(testTools(new([]string)), kernel.NewTool(kernel.Spec[itemArgs, map[string]string]{
		Name: "whoami", Description: "Who is calling, and with which credential.", Policy: readPolicy,
		Handle: func(ctx context.Context, c *kernel.Call, in itemArgs) (map[string]string, error) {
			cred, err := kernel.CredentialFrom(ctx, "upstream")
			if err != nil {
				return nil, err
			}
			return map[string]string{"id": c.Principal.ID, "plan": c.Principal.Plan, "scheme": c.Principal.Scheme, "cred_len": strings.Repeat("x", len(cred))}, nil
		},
	}))
	srv, err := kernel.New(kernel.Info{Name: "t", Version: "v0"}, tools, &opts)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(nil)
	h, err := srv.HTTPHandler(kernel.HTTPOptions{Addr: ts.Listener.Addr().String(), Auth: keys})
	if err != nil {
		t.Fatal(err)
	}
	ts.Config.Handler = h
	ts.Start()
	t.Cleanup(ts.Close)
	f.url = ts.URL + kernel.MCPPath
	return f
}

func post(t *testing.T, url, body string, header map[string]string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(b)
}

func callBody(name string, args any) string {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": map[string]any{"name": name, "arguments": args}})
	return string(b)
}

func TestHTTPPrincipalReachesTheToolLayer(t *testing.T) {
	f := newHTTPFixture(t, 100, false)
	auth := map[string]string{"Authorization": "Bearer " + apiKey}
	resp, body := post(t, f.url, callBody("whoami", map[string]any{"zone": "z", "name": "n"}), auth)
	if resp.StatusCode != 200 || !strings.Contains(body, `\"id\":\"alice\"`) || !strings.Contains(body, `\"scheme\":\"apikey\"`) {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	if r := <-f.audit; r.Principal != "alice" || r.Plan != "pro" || r.Scheme != "apikey" || r.Network != "127.0.0.0/24" {
		t.Fatalf("audit %+v", r)
	}
	resp, _ = post(t, f.url, callBody("whoami", map[string]any{"zone": "z", "name": "n"}), nil)
	if resp.StatusCode != 401 || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
		t.Fatalf("unauthenticated: %d %v", resp.StatusCode, resp.Header)
	}
}

func TestHTTPRateLimitCountsOnce(t *testing.T) {
	f := newHTTPFixture(t, 3, false)
	auth := map[string]string{"Authorization": "Bearer " + apiKey}
	for i := range 3 {
		if resp, body := post(t, f.url, callBody("get_item", map[string]any{"zone": "z", "name": "n"}), auth); resp.StatusCode != 200 || strings.Contains(body, "rate_limited") {
			t.Fatalf("call %d: %d %s", i, resp.StatusCode, body)
		}
	}
	resp, body := post(t, f.url, callBody("get_item", map[string]any{"zone": "z", "name": "n"}), auth)
	var e struct {
		ID    int `json:"id"`
		Error struct {
			Code    int
			Message string
			Data    struct{ Error string }
		}
	}
	_ = json.Unmarshal([]byte(body), &e)
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") == "" || e.Error.Code != -32000 || e.Error.Data.Error != "rate_limited" || !strings.Contains(e.Error.Message, "Resets in ") || e.ID != 7 {
		t.Fatalf("over the limit: %d %v %s", resp.StatusCode, resp.Header, body)
	}
}

func TestHTTPBYOK(t *testing.T) {
	f := newHTTPFixture(t, 100, true)
	auth := map[string]string{"Authorization": "Bearer " + apiKey}
	_, body := post(t, f.url, callBody("whoami", map[string]any{"zone": "z", "name": "n"}), auth)
	if !strings.Contains(body, "Missing Example credentials") || !strings.Contains(body, `"isError":true`) {
		t.Fatalf("no credential header: %s", body)
	}
	auth["X-Example-Token"] = "per-request-secret"
	_, body = post(t, f.url, callBody("whoami", map[string]any{"zone": "z", "name": "n"}), auth)
	if !strings.Contains(body, strings.Repeat("x", len("per-request-secret"))) || strings.Contains(body, "per-request-secret") {
		t.Fatalf("per-request credential: %s", body)
	}
}

func TestHTTPWithGoSDKClient(t *testing.T) {
	f := newHTTPFixture(t, 100, false)
	client := mcp.NewClient(&mcp.Implementation{Name: "c"}, nil)
	hc := &http.Client{Transport: headerRT{"Authorization": "Bearer " + apiKey}}
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: f.url, HTTPClient: hc}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "get_item", Arguments: map[string]any{"zone": "z", "name": "n"}})
	if err != nil || res.IsError {
		t.Fatalf("%v %+v", err, res)
	}
}

type headerRT map[string]string

func (h headerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h {
		r.Header.Set(k, v)
	}
	return http.DefaultTransport.RoundTrip(r)
}
