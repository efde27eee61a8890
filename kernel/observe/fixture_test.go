package observe_test

import (
	"cmp"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/httpguard"
	"github.com/bulwarkmcp/bulwark/kernel/identity"
	"github.com/bulwarkmcp/bulwark/kernel/mcptest"
	"github.com/bulwarkmcp/bulwark/kernel/ratelimit"
	"github.com/bulwarkmcp/bulwark/kernel/upstream"
)

// Values that must never reach a metric or a span.
const (
	proKey     = "pro-k3y-obs-0123456789abcdef0123"
	freeKey    = "free-k3y-obs-0123456789abcdef012"
	carolKey   = "carol-k3y-obs-0123456789abcdef01"
	secretArg  = "s3cr3t-argument-value-4242"
	alice      = "principal-alice-7f3a"
	bob        = "principal-bob-0c1d"
	carol      = "principal-carol-9e8b"
	unknownArg = "no-such-tool-b7b7"
	callLimit  = 20
)

var secrets = []string{proKey, freeKey, carolKey, secretArg, alice, bob, carol, unknownArg}

type fixture struct {
	url      string
	upstream chan string // traceparent each upstream request carried
}

type lookupIn struct {
	Name string `json:"name" jsonschema:"what to look up"`
	Mode string `json:"mode,omitempty" jsonschema:"ok, fail or down"`
}

type deleteIn struct {
	Name string `json:"name" jsonschema:"what to delete"`
}

var readPolicy = kernel.Policy{ReadOnly: kernel.Yes, Destructive: kernel.No, Idempotent: kernel.Yes, OpenWorld: kernel.Yes, Confirm: kernel.Never, Tier: kernel.Open}

// newFixture serves a kernel server with three tools over HTTP, behind API
// keys, a per-principal limit and the flood guard, observed by obs. The
// lookup tool calls a loopback upstream with the argument in the path.
func newFixture(t *testing.T, obs kernel.Observer) *fixture {
	t.Helper()
	f := &fixture{upstream: make(chan string, 100)}
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.upstream <- r.Header.Get("Traceparent")
		if strings.Contains(r.URL.Path, "fail") {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		w.Write([]byte(`{"found":true}`))
	}))
	t.Cleanup(up.Close)
	down := closedAddr(t)
	client := upstream.New(&upstream.Options{Timeout: 5 * time.Second})
	lookup := kernel.NewTool(kernel.Spec[lookupIn, map[string]any]{
		Name: "lookup", Description: "Look something up upstream.", Policy: readPolicy,
		Handle: func(ctx context.Context, _ *kernel.Call, in lookupIn) (map[string]any, error) {
			base := up.URL
			if in.Mode == "down" {
				base = "http://" + down
			}
			u, _ := url.Parse(base + "/items/" + url.PathEscape(in.Name) + "/" + in.Mode)
			resp, err := client.Do(ctx, &upstream.Request{URL: u})
			if err != nil {
				return nil, kernel.Errorf(kernel.UpstreamUnavailable, "The upstream cannot be reached.")
			}
			if !resp.OK() {
				return nil, kernel.Errorf(kernel.NotFound, "Not found.")
			}
			return map[string]any{"found": true}, nil
		},
	})
	del := kernel.NewTool(kernel.Spec[deleteIn, map[string]any]{
		Name: "delete_item", Description: "Delete an item.",
		Policy: kernel.Policy{ReadOnly: kernel.No, Destructive: kernel.Yes, Idempotent: kernel.Yes, OpenWorld: kernel.No,
			Confirm: kernel.Always(kernel.Bind{Target: []string{"name"}}), Tier: kernel.Open},
		Handle: func(context.Context, *kernel.Call, deleteIn) (map[string]any, error) {
			return map[string]any{"deleted": true}, nil
		},
	})
	report := kernel.NewTool(kernel.Spec[deleteIn, map[string]any]{
		Name: "pro_report", Description: "A report for the pro plan.",
		Policy: kernel.Policy{ReadOnly: kernel.Yes, Destructive: kernel.No, Idempotent: kernel.Yes, OpenWorld: kernel.No, Confirm: kernel.Never, Tier: "pro"},
		Handle: func(context.Context, *kernel.Call, deleteIn) (map[string]any, error) {
			return map[string]any{}, nil
		},
	})
	ping := kernel.NewTool(kernel.Spec[struct{}, map[string]any]{
		Name: "ping", Description: "Answer.", Policy: readPolicy,
		Handle: func(context.Context, *kernel.Call, struct{}) (map[string]any, error) { return map[string]any{}, nil },
	})
	keys, err := identity.ParseAPIKeys(strings.NewReader(identity.HashKey(proKey) + " pro " + alice + "\n" +
		identity.HashKey(freeKey) + " free " + bob + "\n" + identity.HashKey(carolKey) + " free " + carol + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	tiers, _ := ratelimit.NewTiers("free", "pro")
	lim, _ := ratelimit.NewLimiter(&ratelimit.LimiterOptions{Limit: callLimit, Window: time.Hour})
	srv, err := kernel.New(kernel.Info{Name: "t", Version: "v0"}, []kernel.Tool{lookup, del, report, ping},
		&kernel.Options{Tiers: tiers, Limiter: lim, Observer: obs})
	if err != nil {
		t.Fatal(err)
	}
	f.url = mcptest.ServeHTTP(t, srv, kernel.HTTPOptions{Auth: keys, Guards: httpguard.PipelineOptions{Flood: &httpguard.FloodOptions{Limit: 200, Window: time.Hour}, MaxBodyBytes: 4 << 10}})
	return f
}

// closedAddr is a loopback address nothing listens on.
func closedAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

func (f *fixture) post(t *testing.T, body string, header map[string]string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", f.url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	req.Host = cmp.Or(header["Host"], req.Host)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// call sends tools/call with key and returns the result's structured
// content (or the JSON-RPC error).
func (f *fixture) call(t *testing.T, key, tool string, args map[string]any, header map[string]string) (int, map[string]any) {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
		"params": map[string]any{"name": tool, "arguments": args}})
	h := map[string]string{"Authorization": "Bearer " + key}
	for k, v := range header {
		h[k] = v
	}
	status, body := f.post(t, string(b), h)
	var msg struct {
		Result struct {
			StructuredContent map[string]any `json:"structuredContent"`
		} `json:"result"`
		Error map[string]any `json:"error"`
	}
	json.Unmarshal([]byte(body), &msg)
	if msg.Error != nil {
		return status, msg.Error
	}
	return status, msg.Result.StructuredContent
}

// traffic drives every kind of call and refusal the metrics count.
func (f *fixture) traffic(t *testing.T, header map[string]string) {
	t.Helper()
	// Calls that run: ok, a 404 upstream, an unreachable upstream.
	for _, mode := range []string{"ok", "fail", "down"} {
		f.call(t, proKey, "lookup", map[string]any{"name": secretArg, "mode": mode}, header)
	}
	// The confirmation gate: issued, refused (a wrong token), redeemed.
	_, res := f.call(t, proKey, "delete_item", map[string]any{"name": secretArg}, header)
	f.call(t, proKey, "delete_item", map[string]any{"name": secretArg, "confirmToken": "wrong-token"}, header)
	_, res = f.call(t, proKey, "delete_item", map[string]any{"name": secretArg}, header)
	token, _ := res["confirmToken"].(string)
	if _, res = f.call(t, proKey, "delete_item", map[string]any{"name": secretArg, "confirmToken": token}, header); res["deleted"] != true {
		t.Fatalf("the confirmed delete did not run: %v", res)
	}
	// The tier: a free plan calls a pro tool.
	f.call(t, freeKey, "pro_report", map[string]any{"name": secretArg}, header)
	// The guards: no key, a foreign Host, a body too large.
	f.call(t, "not-a-key", "lookup", map[string]any{"name": secretArg}, header)
	f.post(t, `{}`, map[string]string{"Host": "evil.example"})
	f.post(t, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"lookup","arguments":{"name":"`+strings.Repeat("x", 8<<10)+`"}}}`, nil)
}

// exhaust spends carol's limit, then calls an unregistered tool over it.
func (f *fixture) exhaust(t *testing.T) {
	t.Helper()
	for range callLimit {
		f.call(t, carolKey, "ping", map[string]any{}, nil)
	}
	if status, _ := f.call(t, carolKey, unknownArg, map[string]any{"name": secretArg}, nil); status != http.StatusTooManyRequests {
		t.Fatalf("over the limit: status %d, want 429", status)
	}
}
