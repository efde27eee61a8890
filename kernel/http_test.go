package kernel_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/audit"
	"github.com/bulwarkmcp/bulwark/kernel/identity"
	"github.com/bulwarkmcp/bulwark/kernel/mcptest"
	"github.com/bulwarkmcp/bulwark/kernel/ratelimit"
	"github.com/bulwarkmcp/bulwark/kernel/upstream"
)

const (
	apiKey  = "k3y-for-tests-0123456789abcdef"
	freeKey = "free-k3y-for-tests-0123456789ab"
)

type httpFixture struct {
	url   string
	audit chan audit.Record
}

func newHTTPFixture(t *testing.T, limit int, byok bool) *httpFixture {
	t.Helper()
	keys, err := identity.ParseAPIKeys(strings.NewReader(identity.HashKey(apiKey) + " pro alice\n" + identity.HashKey(freeKey) + " free bob\n"))
	if err != nil {
		t.Fatal(err)
	}
	tiers, _ := ratelimit.NewTiers("free", "pro")
	lim, _ := ratelimit.NewLimiter(&ratelimit.LimiterOptions{Limit: limit})
	f := &httpFixture{audit: make(chan audit.Record, 100)}
	opts := kernel.Options{Tiers: tiers, Limiter: lim, BYOK: byok,
		Audit:       audit.Func(func(_ context.Context, r audit.Record) { f.audit <- r }),
		Credentials: []kernel.Credential{{Name: "upstream", Provider: "Example", Header: "X-Example-Token", Value: "configured-token"}}}
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
	tools = append(tools, kernel.NewTool(kernel.Spec[itemArgs, map[string]string]{
		Name: "pro_report", Description: "A tool for the pro plan.",
		Policy: kernel.Policy{ReadOnly: kernel.Yes, Destructive: kernel.No, Idempotent: kernel.Yes, OpenWorld: kernel.No, Confirm: kernel.Never, Tier: "pro"},
		Handle: func(context.Context, *kernel.Call, itemArgs) (map[string]string, error) {
			return map[string]string{}, nil
		},
	}))
	srv, err := kernel.New(kernel.Info{Name: "t", Version: "v0"}, tools, &opts)
	if err != nil {
		t.Fatal(err)
	}
	f.url = mcptest.ServeHTTP(t, srv, kernel.HTTPOptions{Auth: keys})
	return f
}

func post(t *testing.T, url, body string, header map[string]string) (*http.Response, string) {
	t.Helper()
	return mcptest.Post(t, url, body, header)
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

// TestHTTPPipelineOrder pins the order of the pipeline where it matters.
func TestHTTPPipelineOrder(t *testing.T) {
	f := newHTTPFixture(t, 2, false)
	evil := map[string]string{"Origin": "https://evil.example"}

	// An oversize body from a blocked origin: 403, not 413.
	huge := callBody("get_item", map[string]any{"zone": strings.Repeat("z", 4<<20), "name": "n"})
	resp, body := post(t, f.url, huge, evil)
	if resp.StatusCode != 403 || !strings.Contains(body, "cors_forbidden") {
		t.Fatalf("oversize from a blocked origin: %d %s", resp.StatusCode, body)
	}
	// An unauthenticated request from a blocked origin: 403 cors_forbidden, not 401.
	resp, body = post(t, f.url, callBody("get_item", map[string]any{"zone": "z", "name": "n"}), evil)
	if resp.StatusCode != 403 || !strings.Contains(body, "cors_forbidden") || resp.Header.Get("WWW-Authenticate") != "" {
		t.Fatalf("unauthenticated from a blocked origin: %d %s", resp.StatusCode, body)
	}
	// A tier refusal spends no rate-limit slot: bob (free) is refused the
	// pro tool five times, then still has both of his two calls.
	bob := map[string]string{"Authorization": "Bearer " + freeKey}
	for range 5 {
		resp, body = post(t, f.url, callBody("pro_report", map[string]any{"zone": "z", "name": "n"}), bob)
		if resp.StatusCode != 200 || !strings.Contains(body, "permission_denied") {
			t.Fatalf("tier refusal: %d %s", resp.StatusCode, body)
		}
	}
	for i := range 2 {
		if resp, body = post(t, f.url, callBody("get_item", map[string]any{"zone": "z", "name": "n"}), bob); resp.StatusCode != 200 || strings.Contains(body, "isError") && strings.Contains(body, "rate_limited") {
			t.Fatalf("call %d after tier refusals: %d %s", i, resp.StatusCode, body)
		}
	}
	if resp, _ = post(t, f.url, callBody("get_item", map[string]any{"zone": "z", "name": "n"}), bob); resp.StatusCode != 429 {
		t.Fatalf("third call: %d, want 429", resp.StatusCode)
	}
	// Limits are per principal: alice is unaffected by bob's.
	if resp, _ = post(t, f.url, callBody("get_item", map[string]any{"zone": "z", "name": "n"}), map[string]string{"Authorization": "Bearer " + apiKey}); resp.StatusCode != 200 {
		t.Fatalf("alice: %d", resp.StatusCode)
	}
}

func TestHTTPHealthzAndPaths(t *testing.T) {
	f := newHTTPFixture(t, 100, false)
	base := strings.TrimSuffix(f.url, kernel.MCPPath)
	resp, err := http.Get(base + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(b) != "ok\n" {
		t.Fatalf("healthz: %d %q", resp.StatusCode, b)
	}
	resp, err = http.Get(f.url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 405 || resp.Header.Get("Allow") != "POST" {
		t.Fatalf("GET /mcp: %d %v", resp.StatusCode, resp.Header)
	}
	resp, err = http.Get(base + "/other")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Fatalf("other path: %d", resp.StatusCode)
	}
}

// TestHTTPProgressReachesTheClient: a client that sends a progress token
// gets the progress notifications of a long call over HTTP too.
func TestHTTPProgressReachesTheClient(t *testing.T) {
	f := newHTTPFixture(t, 100, false)
	var mu sync.Mutex
	var got []string
	client := mcp.NewClient(&mcp.Implementation{Name: "c"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			got = append(got, r.Params.Message)
			mu.Unlock()
		},
	})
	hc := &http.Client{Transport: headerRT{"Authorization": "Bearer " + apiKey}}
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: f.url, HTTPClient: hc}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "change_ttl", Arguments: map[string]any{"zone": "z", "ttl": 300}, Meta: mcp.Meta{"progressToken": "p1"}})
	if err != nil || res.IsError {
		t.Fatalf("%v %+v", err, res)
	}
	for i := 0; i < 200; i++ { // notifications are handled concurrently with the result
		mu.Lock()
		n := len(got)
		mu.Unlock()
		if n > 0 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 1 || !strings.Contains(got[0], "half way") {
		t.Fatalf("progress over HTTP: %q", got)
	}
}

// TestHTTPTracePropagates: a valid traceparent reaches the upstream call a
// tool makes; an invalid one is dropped and reaches nothing.
func TestHTTPTracePropagates(t *testing.T) {
	seen := make(chan string, 4)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen <- r.Header.Get("Traceparent")
		w.Write([]byte(`{}`))
	}))
	defer up.Close()
	client := upstream.New(nil)
	tool := kernel.NewTool(kernel.Spec[struct{}, map[string]string]{
		Name: "call_upstream", Description: "Calls the upstream.", Policy: readPolicy,
		Handle: func(ctx context.Context, _ *kernel.Call, _ struct{}) (map[string]string, error) {
			u, _ := url.Parse(up.URL)
			if _, err := client.Do(ctx, &upstream.Request{Method: "GET", URL: u}); err != nil {
				return nil, err
			}
			return map[string]string{}, nil
		},
	})
	srv, err := kernel.New(kernel.Info{Name: "t"}, []kernel.Tool{tool}, nil)
	if err != nil {
		t.Fatal(err)
	}
	endpoint := mcptest.ServeHTTP(t, srv, kernel.HTTPOptions{})
	const valid = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	for tp, want := range map[string]string{valid: valid, "00-00000000000000000000000000000000-00f067aa0ba902b7-01": "", "garbage": ""} {
		resp, body := post(t, endpoint, callBody("call_upstream", map[string]any{}), map[string]string{"Traceparent": tp})
		if resp.StatusCode != 200 || strings.Contains(body, "isError\":true") {
			t.Fatalf("%d %s", resp.StatusCode, body)
		}
		if got := <-seen; got != want {
			t.Errorf("traceparent %q reached the upstream as %q, want %q", tp, got, want)
		}
	}
}

// TestServeHTTPShutsDownGracefully: when the context ends (SIGINT/SIGTERM in
// the binary), a call in flight finishes and ServeHTTP returns nil.
func TestServeHTTPShutsDownGracefully(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	tool := kernel.NewTool(kernel.Spec[struct{}, map[string]string]{
		Name: "slow", Description: "Waits.", Policy: readPolicy,
		Handle: func(context.Context, *kernel.Call, struct{}) (map[string]string, error) {
			close(started)
			<-release
			return map[string]string{"done": "yes"}, nil
		},
	})
	srv, err := kernel.New(kernel.Info{Name: "t"}, []kernel.Tool{tool}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	addrc, errc := make(chan string, 1), make(chan error, 1)
	go func() {
		errc <- srv.ListenAndServe(ctx, kernel.HTTPOptions{Addr: "127.0.0.1:0"}, func(a string) { addrc <- a })
	}()
	addr := <-addrc
	respc := make(chan string, 1)
	go func() {
		_, body := post(t, "http://"+addr+kernel.MCPPath, callBody("slow", map[string]any{}), nil)
		respc <- body
	}()
	<-started
	cancel()
	refused := false // once shutdown begins the listener is closed
	for i := 0; i < 200 && !refused; i++ {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			refused = true
			break
		}
		conn.Close()
		time.Sleep(10 * time.Millisecond)
	}
	if !refused {
		t.Error("new connections were still accepted during shutdown")
	}
	close(release)
	if body := <-respc; !strings.Contains(body, `\"done\":\"yes\"`) {
		t.Fatalf("in-flight call: %s", body)
	}
	if err := <-errc; err != nil {
		t.Fatalf("ListenAndServe: %v", err)
	}
}

// TestStdioAnswersBeforeEOF: a client that writes its requests and closes
// stdin at once still gets every answer.
func TestStdioAnswersBeforeEOF(t *testing.T) {
	f := newFixture(t, kernel.Options{})
	in := io.NopCloser(strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"sh","version":"0"}}}` + "\n" +
			`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" +
			`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_item","arguments":{"zone":"z","name":"n"}}}` + "\n"))
	var out syncWriter
	if err := f.srv.ServeStdio(context.Background(), in, &out); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	if !strings.Contains(got, `"id":1,"result"`) || !strings.Contains(got, `"id":2,"result"`) {
		t.Fatalf("answers: %s", got)
	}
}

type syncWriter struct {
	mu sync.Mutex
	b  strings.Builder
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}
func (w *syncWriter) Close() error { return nil }
func (w *syncWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// TestHTTPScopeWithTraceHeaders: with valid trace headers (the one case in
// which admission copies the request, to pass them on upstream), the
// principal and the client's network still reach the tool layer and the
// audit, and the admission decided by the HTTP layer is the one the tool
// layer uses: the limit counts each call once.
func TestHTTPScopeWithTraceHeaders(t *testing.T) {
	f := newHTTPFixture(t, 2, false)
	h := map[string]string{"Authorization": "Bearer " + apiKey,
		"Traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "Tracestate": "vendor=x"}
	for i := range 2 {
		resp, body := post(t, f.url, callBody("whoami", map[string]any{"zone": "z", "name": "n"}), h)
		if resp.StatusCode != 200 || !strings.Contains(body, `\"id\":\"alice\"`) {
			t.Fatalf("call %d: %d %s", i, resp.StatusCode, body)
		}
		if r := <-f.audit; r.Principal != "alice" || r.Plan != "pro" || r.Scheme != "apikey" || r.Network != "127.0.0.0/24" {
			t.Fatalf("call %d: audit %+v", i, r)
		}
	}
	if resp, _ := post(t, f.url, callBody("whoami", map[string]any{"zone": "z", "name": "n"}), h); resp.StatusCode != 429 {
		t.Fatalf("third call: %d, want 429 (each call counted once)", resp.StatusCode)
	}
	if r := <-f.audit; r.Outcome != audit.RateLimited || r.Network != "127.0.0.0/24" || r.Principal != "alice" {
		t.Fatalf("refusal audit %+v", r)
	}
}
