package rustpad_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	fake "github.com/bulwarkmcp/bulwark/internal/fake/rustpad"
	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/confirm"
	"github.com/bulwarkmcp/bulwark/kernel/mcptest"
	"github.com/bulwarkmcp/bulwark/kernel/upstream"
	"github.com/bulwarkmcp/bulwark/servers/rustpad"
	"github.com/bulwarkmcp/bulwark/servers/rustpad/ot"
	"github.com/bulwarkmcp/bulwark/servers/rustpad/session"
)

// fixture is a Rustpad server over the fake peer, behind the kernel, with
// an in-process MCP client.
type fixture struct {
	peer *fake.Server
	srv  *rustpad.Server
	k    *kernel.Server
	sess *mcptest.Session
	url  string // the base URL the server uses
}

// setup configures a fixture; all fields are optional.
type setup struct {
	cfg   rustpad.Config // URL defaults to the peer's (or the proxy's)
	kopts kernel.Options
	// proxy, when set, wraps the peer's handler: the server talks to a
	// loopback server running proxy(peer) instead of the peer itself.
	proxy func(peer http.Handler) http.Handler
	// tls serves the peer (or the proxy) over TLS with httptest's own
	// certificate, which no client trusts by default.
	tls bool
	// quick sets short session deadlines for hostile cases.
	quick bool
	http  *upstream.Client
}

// testSession are the session options of the fixtures: deadlines short
// enough for a hung test to fail fast, long enough for -race.
func testSession(quick bool) session.Options {
	if quick {
		return session.Options{HandshakeTimeout: 400 * time.Millisecond, AckTimeout: 400 * time.Millisecond, ReadTimeout: 300 * time.Millisecond}
	}
	return session.Options{HandshakeTimeout: 5 * time.Second, AckTimeout: 5 * time.Second, ReadTimeout: 5 * time.Second}
}

func newFixture(t testing.TB, su setup) *fixture {
	t.Helper()
	f := &fixture{peer: fake.Start(t)}
	f.url = f.peer.URL
	if su.proxy != nil || su.tls {
		var h http.Handler = f.peer
		if su.proxy != nil {
			h = su.proxy(f.peer)
		}
		ts := httptest.NewUnstartedServer(h)
		ts.Config.ErrorLog = log.New(io.Discard, "", 0) // refused certificates are expected
		if su.tls {
			ts.StartTLS()
		} else {
			ts.Start()
		}
		t.Cleanup(func() { f.peer.Close(); ts.Close() })
		f.url = ts.URL
	}
	cfg := su.cfg
	if cfg.URL == "" {
		cfg.URL = f.url
	}
	if cfg.Session == (session.Options{}) {
		cfg.Session = testSession(su.quick)
	}
	srv, err := rustpad.New(cfg, rustpad.Deps{HTTP: su.http})
	if err != nil {
		t.Fatal(err)
	}
	opts := su.kopts
	opts.Envelope = srv.Envelope()
	if opts.Confirm == nil {
		opts.Confirm = confirm.NewIssuer(nil, nil)
	}
	k, err := kernel.New(kernel.Info{Name: "bulwark-rustpad", Version: "test"}, srv.Tools(), &opts)
	if err != nil {
		t.Fatal(err)
	}
	f.srv, f.k = srv, k
	f.sess = mcptest.Connect(t, k, nil)
	return f
}

func (f *fixture) call(t testing.TB, tool string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	return f.sess.Call(t, tool, args)
}

// ok calls a tool, fails on a tool error and decodes the structured result.
func (f *fixture) ok(t testing.TB, tool string, args map[string]any, out any) string {
	t.Helper()
	res := f.call(t, tool, args)
	if res.IsError {
		t.Fatalf("%s %.200v: %s", tool, args, mcptest.Text(res))
	}
	if out != nil {
		mcptest.Structured(t, res, out)
	}
	return mcptest.Text(res)
}

// confirmed calls a gated tool twice: the refusal, then with its token.
func (f *fixture) confirmed(t testing.TB, tool string, args map[string]any, out any) string {
	t.Helper()
	tok := token(t, f.call(t, tool, args))
	return f.ok(t, tool, with(args, "confirmToken", tok), out)
}

// fails calls a tool and asserts a tool error with code; it returns the text.
func (f *fixture) fails(t testing.TB, tool string, args map[string]any, code kernel.Code) string {
	t.Helper()
	res := f.call(t, tool, args)
	return isError(t, res, code)
}

func isError(t testing.TB, res *mcp.CallToolResult, code kernel.Code) string {
	t.Helper()
	text := mcptest.Text(res)
	if !res.IsError {
		t.Fatalf("succeeded, want %s: %.500s", code, text)
	}
	var s struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	mcptest.Structured(t, res, &s)
	if s.Error.Code != string(code) {
		t.Fatalf("code %q, want %q: %s", s.Error.Code, code, text)
	}
	return text
}

// hasCode reports whether res is a tool error with code.
func hasCode(res *mcp.CallToolResult, code kernel.Code) bool {
	sc, _ := res.StructuredContent.(map[string]any)
	e, _ := sc["error"].(map[string]any)
	return res.IsError && e["code"] == string(code)
}

// token returns the confirmation token of a refusal.
func token(t testing.TB, res *mcp.CallToolResult) string {
	t.Helper()
	var s struct {
		ConfirmToken string `json:"confirmToken"`
	}
	mcptest.Structured(t, res, &s)
	if s.ConfirmToken == "" || !res.IsError {
		t.Fatalf("no confirmation refusal: %s", mcptest.Text(res))
	}
	return s.ConfirmToken
}

func with(m map[string]any, kv ...any) map[string]any {
	out := make(map[string]any, len(m)+len(kv)/2)
	for k, v := range m {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i].(string)] = kv[i+1]
	}
	return out
}

func contains(t testing.TB, text string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(text, w) {
			t.Fatalf("text lacks %q:\n%.2000s", w, text)
		}
	}
}

func lacks(t testing.TB, text string, unwanted ...string) {
	t.Helper()
	for _, u := range unwanted {
		if strings.Contains(text, u) {
			t.Fatalf("text holds %q:\n%.2000s", u, text)
		}
	}
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// user is a second, simulated Rustpad user on a pad (a raw client).
type user struct {
	c *fake.Client
}

func connectUser(t testing.TB, f *fixture, pad string) *user {
	t.Helper()
	c, err := fake.Connect(ctxT(t), f.peer.URL, pad)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &user{c: c}
}

// write sends an edit as another user and waits until the peer applied it.
func write(t testing.TB, f *fixture, pad string, revision int, op *ot.Operation) {
	t.Helper()
	u := connectUser(t, f, pad)
	_, before := f.peer.State(pad)
	if err := u.c.SendEdit(ctxT(t), revision, op); err != nil {
		t.Fatal(err)
	}
	waitRevision(t, f, pad, before+1)
	u.c.Close()
}

// tryWrite is write for hooks that run on the server's goroutines, where
// t.Fatal must not be called.
func tryWrite(f *fixture, pad string, revision int, op *ot.Operation) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := fake.Connect(ctx, f.peer.URL, pad)
	if err != nil {
		return err
	}
	defer c.Close()
	_, before := f.peer.State(pad)
	if err := c.SendEdit(ctx, revision, op); err != nil {
		return err
	}
	for ctx.Err() == nil {
		if _, r := f.peer.State(pad); r > before {
			return nil
		}
		waitABit()
	}
	return fmt.Errorf("pad %s: the edit was not applied", pad)
}

func waitRevision(t testing.TB, f *fixture, pad string, rev int) {
	t.Helper()
	for deadline := time.Now().Add(3 * time.Second); ; time.Sleep(2 * time.Millisecond) {
		if _, r := f.peer.State(pad); r >= rev {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("pad %s never reached revision %d", pad, rev)
		}
	}
}

// seed writes text to a fresh pad as another user would.
func seed(t testing.TB, f *fixture, pad, text string) {
	t.Helper()
	write(t, f, pad, 0, ot.New().Insert(text))
}

// noLeak fails the test if goroutines started after it was called are
// still running shortly after the test body ended. Call it after the
// fixture is up: the fixture's own goroutines are the baseline. Idle
// keep-alive connections of the /api client are closed first: they are
// a pool, not a leak.
func (f *fixture) noLeak(t *testing.T) {
	t.Helper()
	f.srv.CloseIdleConnections()
	before := runtime.NumGoroutine()
	t.Cleanup(func() {
		f.srv.CloseIdleConnections()
		deadline := time.Now().Add(3 * time.Second)
		for runtime.NumGoroutine() > before {
			if time.Now().After(deadline) {
				buf := make([]byte, 1<<16)
				t.Fatalf("goroutines: %d before, %d after\n%s", before, runtime.NumGoroutine(), buf[:runtime.Stack(buf, true)])
			}
			time.Sleep(5 * time.Millisecond)
		}
	})
}

func waitABit() { time.Sleep(5 * time.Millisecond) }
