package kernel_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/audit"
	"github.com/bulwarkmcp/bulwark/kernel/confirm"
	"github.com/bulwarkmcp/bulwark/kernel/httpguard"
	"github.com/bulwarkmcp/bulwark/kernel/mcptest"
	"github.com/bulwarkmcp/bulwark/kernel/ratelimit"
)

// switchStore is a shared store that can be taken down and brought back:
// rate-limit windows and confirmation tokens in memory, every operation
// failing while down.
type switchStore struct {
	down   atomic.Bool
	limits *ratelimit.MemoryStore
	tokens *confirm.MemoryStore
}

var errDown = errors.New("dial tcp 127.0.0.1:6390: connect: connection refused")

func newSwitchStore() *switchStore {
	return &switchStore{limits: ratelimit.NewMemoryStore(0), tokens: confirm.NewMemoryStore()}
}

func (s *switchStore) Hit(ctx context.Context, key string, now time.Time, w time.Duration) (int, time.Time, error) {
	if s.down.Load() {
		return 0, time.Time{}, errDown
	}
	return s.limits.Hit(ctx, key, now, w)
}

func (s *switchStore) Put(ctx context.Context, p confirm.Pending, max int) error {
	if s.down.Load() {
		return errDown
	}
	return s.tokens.Put(ctx, p, max)
}

func (s *switchStore) Redeem(ctx context.Context, principal string, h, d [32]byte, now time.Time) (bool, error) {
	if s.down.Load() {
		return false, errDown
	}
	return s.tokens.Redeem(ctx, principal, h, d, now)
}

// refusalServer is one server over both transports' entry points: its MCP
// server (what stdio serves) and its HTTP handler, unauthenticated on
// loopback, so both see the principal "local" on the plan "local".
type refusalServer struct {
	srv     *kernel.Server
	store   *switchStore
	url     string
	audit   chan audit.Record
	log     *lockedWriter
	deleted *[]string
}

func newRefusalServer(t *testing.T, limit int, outage kernel.StoreOutage) *refusalServer {
	t.Helper()
	clock := &fakeClock{}
	st := newSwitchStore()
	tiers, _ := ratelimit.NewTiers("local", "pro")
	lim, err := ratelimit.NewLimiter(&ratelimit.LimiterOptions{Limit: limit, Store: st, Now: clock.Now, Setting: "--rate-limit"})
	if err != nil {
		t.Fatal(err)
	}
	rs := &refusalServer{store: st, audit: make(chan audit.Record, 1000), log: &lockedWriter{w: &bytes.Buffer{}}, deleted: new([]string)}
	tools := append(testTools(rs.deleted), kernel.NewTool(kernel.Spec[itemArgs, map[string]string]{
		Name: "pro_report", Description: "A tool for the pro plan.",
		Policy: kernel.Policy{ReadOnly: kernel.Yes, Destructive: kernel.No, Idempotent: kernel.Yes, OpenWorld: kernel.No, Confirm: kernel.Never, Tier: "pro"},
		Handle: func(context.Context, *kernel.Call, itemArgs) (map[string]string, error) {
			return map[string]string{}, nil
		},
	}))
	rs.srv, err = kernel.New(kernel.Info{Name: "t"}, tools, &kernel.Options{Tiers: tiers, Limiter: lim, Now: clock.Now,
		StoreOutage: outage, Confirm: confirm.NewIssuer(st, &confirm.Options{Now: clock.Now}),
		Logger: slog.New(slog.NewTextHandler(rs.log, nil)),
		Audit:  audit.Func(func(_ context.Context, r audit.Record) { rs.audit <- r })})
	if err != nil {
		t.Fatal(err)
	}
	rs.url = mcptest.ServeHTTP(t, rs.srv, kernel.HTTPOptions{
		Guards: httpguard.PipelineOptions{Flood: &httpguard.FloodOptions{Limit: 1000, Setting: "--flood-limit"}}})
	return rs
}

// rpcError is the JSON-RPC error of an HTTP answer.
type rpcError struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

func httpError(t *testing.T, body string) rpcError {
	t.Helper()
	var e struct{ Error rpcError }
	if err := json.Unmarshal([]byte(body), &e); err != nil {
		t.Fatalf("not a JSON-RPC error: %s", body)
	}
	return e.Error
}

// TestRefusalsSameOnEveryTransport: each kind of refusal has one shape, the
// same over HTTP and stdio (the MCP session), and the HTTP status and
// Retry-After say the same as the body.
func TestRefusalsSameOnEveryTransport(t *testing.T) {
	args := map[string]any{"zone": "z", "name": "n"}
	for _, tc := range []struct {
		name   string
		tool   string
		setup  func(rs *refusalServer, call func())
		status int
		code   int64
		reason string
	}{
		{"per-principal limit", "get_item", func(rs *refusalServer, call func()) { call() }, 429, ratelimit.RefusalCode, ratelimit.ReasonRateLimited},
		{"store outage", "get_item", func(rs *refusalServer, call func()) { rs.store.down.Store(true) }, 503, ratelimit.UnavailableCode, ratelimit.ReasonStoreUnavailable},
		{"tier", "pro_report", func(*refusalServer, func()) {}, 200, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			viaHTTP, viaStdio := newRefusalServer(t, 1, kernel.StoreOutage{Setting: "--store-outage"}), newRefusalServer(t, 1, kernel.StoreOutage{Setting: "--store-outage"})
			sess := mcptest.Connect(t, viaStdio.srv, nil)
			tc.setup(viaHTTP, func() { post(t, viaHTTP.url, callBody(tc.tool, args), nil) })
			tc.setup(viaStdio, func() { sess.Call(t, tc.tool, args) })

			resp, body := post(t, viaHTTP.url, callBody(tc.tool, args), nil)
			res, err := sess.CallTool(context.Background(), &mcp.CallToolParams{Name: tc.tool, Arguments: args})
			if resp.StatusCode != tc.status {
				t.Fatalf("HTTP status %d, want %d: %s", resp.StatusCode, tc.status, body)
			}
			if tc.code == 0 { // a tool error on both
				if err != nil || !res.IsError || !strings.Contains(body, `"isError":true`) {
					t.Fatalf("not a tool error on both: %v %s", err, body)
				}
				var viaH struct{ Result mcp.CallToolResult }
				if e := json.Unmarshal([]byte(body), &viaH); e != nil || mcptest.Text(&viaH.Result) != mcptest.Text(res) || !strings.Contains(mcptest.Text(res), "permission_denied") {
					t.Fatalf("HTTP %q, stdio %q", body, mcptest.Text(res))
				}
				return
			}
			var we *jsonrpc.Error
			if !errors.As(err, &we) {
				t.Fatalf("stdio: not a JSON-RPC error: %v %+v", err, res)
			}
			h := httpError(t, body)
			if h.Code != we.Code || h.Message != we.Message || string(h.Data) != string(we.Data) || h.Code != tc.code {
				t.Fatalf("shapes differ:\nHTTP  %d %q %s\nstdio %d %q %s", h.Code, h.Message, h.Data, we.Code, we.Message, we.Data)
			}
			var data ratelimit.RefusalData
			_ = json.Unmarshal(h.Data, &data)
			if data.Error != tc.reason || data.Setting == "" || !strings.Contains(h.Message, data.Setting) {
				t.Fatalf("data %s: reason or setting missing from %q", h.Data, h.Message)
			}
			if ra := resp.Header.Get("Retry-After"); (tc.status == 429) != (ra != "") || tc.status == 429 && ra != jsonInt(data.RetryAfterSeconds) {
				t.Fatalf("Retry-After %q, data %s", ra, h.Data)
			}
		})
	}
}

func jsonInt(n int) string { b, _ := json.Marshal(n); return string(b) }

// TestFloodRefusalHasTheLimitShape: the flood guard's refusal is shaped by
// the same function as the per-principal limit's, with scope "address".
func TestFloodRefusalHasTheLimitShape(t *testing.T) {
	srv, err := kernel.New(kernel.Info{Name: "t"}, testTools(new([]string)), nil)
	if err != nil {
		t.Fatal(err)
	}
	url := mcptest.ServeHTTP(t, srv, kernel.HTTPOptions{
		Guards: httpguard.PipelineOptions{Flood: &httpguard.FloodOptions{Limit: 1, Window: time.Minute, Setting: "--flood-limit"}}})
	post(t, url, callBody("get_item", map[string]any{"zone": "z", "name": "n"}), nil)
	resp, body := post(t, url, callBody("get_item", map[string]any{"zone": "z", "name": "n"}), nil)
	e := httpError(t, body)
	var data ratelimit.RefusalData
	_ = json.Unmarshal(e.Data, &data)
	want := ratelimit.Refusal(ratelimit.Decision{Scope: ratelimit.ScopeAddress, Limit: 1, Window: time.Minute,
		RetryAfter: time.Duration(data.RetryAfterSeconds) * time.Second, Setting: "--flood-limit"})
	if resp.StatusCode != http.StatusTooManyRequests || e.Code != want.Code || e.Message != want.Message || string(e.Data) != string(want.Data) ||
		resp.Header.Get("Retry-After") != jsonInt(data.RetryAfterSeconds) {
		t.Fatalf("flood refusal %d %s, want %+v %s", resp.StatusCode, body, want, want.Data)
	}
}

// lockedWriter serializes writes to a buffer the test reads.
type lockedWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *lockedWriter) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.String()
}

// TestAuditDigestOnlyOnceArgumentsAreRead pins what docs/security.md says:
// a call that ran carries the argument digest; a call refused at admission
// (tier, rate limit, store outage) was refused without reading its
// arguments and carries none, over HTTP and stdio alike.
func TestAuditDigestOnlyOnceArgumentsAreRead(t *testing.T) {
	rs := newRefusalServer(t, 1, kernel.StoreOutage{})
	sess := mcptest.Connect(t, rs.srv, nil)
	args := map[string]any{"zone": "z", "name": "n"}
	check := func(what string, outcome audit.Outcome, digest bool) {
		t.Helper()
		r := lastRecord(rs.audit)
		if r.Outcome != outcome || (r.ArgsDigest != "") != digest {
			t.Fatalf("%s: record %+v", what, r)
		}
	}
	sess.Call(t, "get_item", args)
	check("a call that ran", audit.OK, true)
	post(t, rs.url, callBody("get_item", args), nil)
	check("rate limited over HTTP", audit.RateLimited, false)
	_, _ = sess.CallTool(context.Background(), &mcp.CallToolParams{Name: "get_item", Arguments: args})
	check("rate limited over stdio", audit.RateLimited, false)
	sess.Call(t, "pro_report", args)
	check("tier", audit.Refused, false)
	rs.store.down.Store(true)
	post(t, rs.url, callBody("get_item", args), nil)
	check("store outage", audit.Refused, false)
}

// TestGoldenRefusalTranscripts pins the wire form of a rate-limit refusal and
// of a store outage over the MCP session (stdio's form; HTTP sends the same
// error objects with 429 and 503). Regenerate with
// UPDATE_GOLDEN=1 go test ./kernel -run Golden.
func TestGoldenRefusalTranscripts(t *testing.T) {
	item := map[string]any{"zone": "example.com", "name": "www"}
	for _, c := range []struct {
		name, comment string
		down          bool
	}{
		{"rate_limited", "Over the per-principal limit: JSON-RPC -32000, the limit stated, its flag named, the reset given.", false},
		{"store_unavailable", "The shared store does not answer: JSON-RPC -32001 store_unavailable with a hint, never a rate-limit message.", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			rs := newRefusalServer(t, 1, kernel.StoreOutage{Setting: "--store-outage"})
			sess := mcptest.Connect(t, rs.srv, nil)
			if !c.down {
				sess.Call(t, "get_item", item)
			}
			sess.Reset()
			rs.store.down.Store(c.down)
			if _, err := sess.CallTool(context.Background(), &mcp.CallToolParams{Name: "get_item", Arguments: item}); err == nil {
				t.Fatal("not refused")
			}
			mcptest.Golden(t, "testdata/transcripts/"+c.name+".txtar", c.comment,
				map[string]string{"wire": sess.Transcript()}, []string{"wire"})
		})
	}
}
