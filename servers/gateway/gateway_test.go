package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/internal/fake/mcpupstream"
	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/audit"
	"github.com/bulwarkmcp/bulwark/kernel/authz"
	"github.com/bulwarkmcp/bulwark/kernel/mcptest"
	"github.com/bulwarkmcp/bulwark/kernel/ratelimit"
	"github.com/bulwarkmcp/bulwark/servers/gateway"
)

// The test binary is also the hostile upstream: the gateway re-executes it
// with mcpupstream.EnvVar=1 in the child's (allowlisted) environment.
func TestMain(m *testing.M) {
	mcpupstream.MaybeServe()
	os.Exit(m.Run())
}

// readOnlyTools are the fake's tools the tests declare read-only; the
// fake's write_file (which claims to be read-only) and delete_file are left
// on no list, so they are destructive.
var readOnlyTools = []string{"ask", "clash", "spew", "echo", "inject", "secret", "big", "endless", "crash", "hang", "slow", "progress", "image", "resource", "fail", "env", "whoami", "meta",
	"read_text_file", "read_multiple_files", "fetch_url", "stat_any", "stat_nullable"}

// fakeUpstream is an upstream entry that spawns the fake.
func fakeUpstream() gateway.Upstream {
	return gateway.Upstream{
		Name: "fake", Command: os.Args[0], Env: []string{mcpupstream.EnvVar, "ALLOWED_VAR", "FAKE_API_TOKEN"},
		PublicEnv:     []string{mcpupstream.EnvVar, "ALLOWED_VAR"},
		ReadOnlyTools: readOnlyTools, TargetArg: "path",
	}
}

// testEnv is the gateway's environment as the tests inject it.
func testEnv(name string) string {
	switch name {
	case mcpupstream.EnvVar:
		return "1"
	case "ALLOWED_VAR":
		return "visible"
	case "FAKE_API_TOKEN":
		return "tok-ENV-SECRET-123456"
	case "NOT_ALLOWED":
		return "leaked"
	}
	return os.Getenv(name)
}

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Write(p) }
func (s *syncBuf) String() string              { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

type fixture struct {
	url   string // the MCP endpoint, served over HTTP (options.http)
	gw    *gateway.Gateway
	ks    *kernel.Server
	sess  *mcptest.Session
	log   *syncBuf
	mu    sync.Mutex
	audit []audit.Record
}

func (f *fixture) records() []audit.Record {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]audit.Record(nil), f.audit...)
}

type options struct {
	getenv func(string) string // testEnv when nil
	cfg    gateway.Config
	pinner gateway.Pinner
	kopts  kernel.Options
	client *mcp.ClientOptions
	sdk    bool // relay calls through the go-sdk client session (gateway.UseSDKCalls)
	stdio  bool // serve the client over stdio (kernel.Server.ServeStdio on OS pipes), as the CLI does
	http   bool // serve the client over Streamable HTTP (kernel.Server.HTTPHandler on loopback), as --http does
	route  bool // the gateway routes answers to the replica that asked (kernel.Options.StateRouter), as --advertise-url does
}

func newFixture(t *testing.T, o options) *fixture {
	t.Helper()
	if len(o.cfg.Upstreams) == 0 {
		o.cfg.Upstreams = []gateway.Upstream{fakeUpstream()}
	}
	f := &fixture{log: &syncBuf{}}
	logger := slog.New(slog.NewTextHandler(f.log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	if o.getenv == nil {
		o.getenv = testEnv
	}
	gw, err := gateway.New(o.cfg, gateway.Deps{Logger: logger, Getenv: o.getenv, Pinner: o.pinner})
	if err != nil {
		t.Fatal(err)
	}
	if o.sdk {
		gateway.UseSDKCalls(gw)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := gw.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(gw.Close)
	f.gw = gw
	opts := o.kopts
	opts.DynamicTools = true // as the CLI builds it
	if tr := gw.TaskRelay(); tr != nil && opts.Tasks == nil {
		opts.Tasks = tr
	}
	opts.Features = gw.Features()
	opts.Envelope = gw.Envelope()
	opts.Credentials = gw.Credentials()
	opts.Secrets = gw.Secrets()
	opts.Logger = logger
	if o.route {
		opts.StateRouter = gw
	}
	opts.Audit = gw.Audit(audit.Func(func(_ context.Context, r audit.Record) {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.audit = append(f.audit, r)
	}))
	ks, err := kernel.New(kernel.Info{Name: "bulwark-gateway", Instructions: gw.Instructions()}, gw.Tools(), &opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := gw.Attach(ks); err != nil {
		t.Fatal(err)
	}
	f.ks = ks
	if o.stdio {
		f.sess = &mcptest.Session{ClientSession: serveStdio(t, ks, o.client)}
		return f
	}
	if o.http {
		var cs *mcp.ClientSession
		cs, f.url = serveHTTP(t, ks, o.client)
		f.sess = &mcptest.Session{ClientSession: cs}
		return f
	}
	f.sess = mcptest.Connect(t, ks, &mcptest.Options{Client: o.client})
	return f
}

// serveStdio connects a go-sdk client to ks served over stdio on a pair of
// OS pipes, as `bulwark gateway` serves its client.
func serveStdio(t *testing.T, ks *kernel.Server, copts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	inR, inW, err := os.Pipe() // client -> gateway
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe() // gateway -> client
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan struct{})
	go func() { defer close(served); _ = ks.ServeStdio(ctx, inR, outW); outW.Close() }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, copts).Connect(context.Background(), &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); cancel(); inW.Close(); <-served; outR.Close() })
	return cs
}

// serveHTTP connects a go-sdk client to ks served over Streamable HTTP on
// loopback, as `bulwark gateway --http` serves, and returns its endpoint.
func serveHTTP(t *testing.T, ks *kernel.Server, copts *mcp.ClientOptions) (*mcp.ClientSession, string) {
	t.Helper()
	endpoint := mcptest.ServeHTTP(t, ks, kernel.HTTPOptions{})
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, copts).Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: endpoint}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, endpoint
}

// postLegacyCall posts a 2025-11-25 tools/call of name, without arguments
// or _meta, to the endpoint url and returns the response body.
func postLegacyCall(t *testing.T, url, name string) string {
	t.Helper()
	resp, body := mcptest.Post(t, url, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"`+name+`","arguments":{}}}`,
		map[string]string{"Mcp-Protocol-Version": "2025-11-25"})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("legacy call: %d %s", resp.StatusCode, body)
	}
	return body
}

func text(res *mcp.CallToolResult) string { return mcptest.Text(res) }

func errorCode(res *mcp.CallToolResult) string {
	m, _ := res.StructuredContent.(map[string]any)
	e, _ := m["error"].(map[string]any)
	c, _ := e["code"].(string)
	return c
}

func wantError(t *testing.T, res *mcp.CallToolResult, code string) {
	t.Helper()
	if !res.IsError || errorCode(res) != code {
		t.Fatalf("want a %s tool error, got isError=%v code=%q: %s", code, res.IsError, errorCode(res), text(res))
	}
}

// eventually calls fake.echo until the upstream answers again.
func eventually(t *testing.T, f *fixture) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		res := f.sess.Call(t, "fake.echo", map[string]any{"text": "back"})
		if !res.IsError && strings.Contains(text(res), "back") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the upstream did not come back: %s\nlog:\n%s", text(res), f.log.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestChildEnvironmentIsTheAllowlistOnly(t *testing.T) {
	os.Setenv("NOT_ALLOWED_PROCESS_VAR", "leaked")
	defer os.Unsetenv("NOT_ALLOWED_PROCESS_VAR")
	f := newFixture(t, options{})
	res := f.sess.Call(t, "fake.env", map[string]any{})
	got := text(res)
	for _, want := range []string{mcpupstream.EnvVar + "=1", "ALLOWED_VAR=visible"} {
		if !strings.Contains(got, want) {
			t.Errorf("child environment lacks %q:\n%s", want, got)
		}
	}
	for _, bad := range []string{"NOT_ALLOWED", "PATH=", "HOME="} {
		if strings.Contains(got, bad) {
			t.Errorf("child environment holds %q, which is not on the allowlist:\n%s", bad, got)
		}
	}
}

// TestSecretEnvNeverReachesTheClient: the value of a variable passed to
// the child that is not public (FAKE_API_TOKEN) is a secret: the child
// listing its environment, or echoing it \u-escaped, gets it to no client,
// in process, over stdio or over HTTP; the public ones pass.
func TestSecretEnvNeverReachesTheClient(t *testing.T) {
	for _, o := range []options{{}, {stdio: true}, {http: true}} {
		f := newFixture(t, o)
		got := text(f.sess.Call(t, "fake.env", map[string]any{}))
		if strings.Contains(got, "tok-ENV-SECRET") || !strings.Contains(got, "FAKE_API_TOKEN=[redacted]") || !strings.Contains(got, "ALLOWED_VAR=visible") {
			t.Errorf("stdio=%v http=%v: %s", o.stdio, o.http, got)
		}
	}
}

// TestShortSecretEnvIsRefused: a passed variable that is not public and
// holds a value too short to be removed from results safely stops the
// gateway at New, with the variable's name and the way out, never the value.
func TestShortSecretEnvIsRefused(t *testing.T) {
	u := fakeUpstream()
	u.Env = append(u.Env, "DB_PASS")
	getenv := func(n string) string {
		if n == "DB_PASS" {
			return "hunter2"
		}
		return testEnv(n)
	}
	_, err := gateway.New(gateway.Config{Upstreams: []gateway.Upstream{u}}, gateway.Deps{Getenv: getenv})
	if err == nil || !strings.Contains(err.Error(), "DB_PASS") || !strings.Contains(err.Error(), "public_env") || strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("New = %v", err)
	}
	u.PublicEnv = append(u.PublicEnv, "DB_PASS")
	if _, err := gateway.New(gateway.Config{Upstreams: []gateway.Upstream{u}}, gateway.Deps{Getenv: getenv}); err != nil {
		t.Fatalf("listed in public_env: %v", err)
	}
	u.PublicEnv = []string{"NOT_PASSED"}
	if _, err := gateway.New(gateway.Config{Upstreams: []gateway.Upstream{u}}, gateway.Deps{Getenv: getenv}); err == nil {
		t.Fatal("public_env naming a variable not in env was accepted")
	}
}

func TestToolsAreNamespacedWithPolicyFromConfigNotAnnotations(t *testing.T) {
	f := newFixture(t, options{})
	tools := map[string]*mcp.Tool{}
	for tool, err := range f.sess.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		tools[tool.Name] = tool
	}
	if _, ok := tools["fake.echo"]; !ok {
		t.Fatalf("fake.echo not listed: %v", tools)
	}
	for n := range tools {
		if !strings.HasPrefix(n, "fake.") || strings.ContainsAny(n, " !") {
			t.Errorf("tool %q is not namespaced or has a bad name", n)
		}
	}
	// write_file claims readOnlyHint; the upstream is not trusted, and the
	// configuration does not list it: destructive, gated.
	w := tools["fake.write_file"]
	if w.Annotations.ReadOnlyHint || w.Annotations.DestructiveHint == nil || !*w.Annotations.DestructiveHint {
		t.Errorf("write_file's lying annotations were believed: %+v", w.Annotations)
	}
	if props := w.InputSchema.(map[string]any)["properties"].(map[string]any); props["confirmToken"] == nil {
		t.Error("write_file is not gated")
	}
	if !tools["fake.echo"].Annotations.ReadOnlyHint {
		t.Error("echo, listed read-only, is not read-only")
	}
	inj := tools["fake.inject"].Description
	if strings.Contains(inj, "</untrusted-data>") || !strings.Contains(inj, "untrusted") {
		t.Errorf("an injected description reaches the client unmarked: %q", inj)
	}
}

func TestTrustedAnnotationsAndAllowDeny(t *testing.T) {
	u := fakeUpstream()
	u.TrustAnnotations = true
	u.ReadOnlyTools = nil
	u.DenyTools = []string{"hang"}
	f := newFixture(t, options{cfg: gateway.Config{Upstreams: []gateway.Upstream{u}}, kopts: kernel.Options{ReadOnly: true}})
	names := map[string]bool{}
	for _, tool := range f.ks.Tools() {
		names[tool.Name()] = true
	}
	// Trusted, the fake's lie is believed: write_file stays in read-only
	// mode; delete_file (destructiveHint) does not; hang is denied.
	if !names["fake.write_file"] || names["fake.delete_file"] || names["fake.hang"] || !names["fake.echo"] {
		t.Fatalf("tools: %v", names)
	}
}

func TestDestructiveToolIsGatedAndTokenBoundToArguments(t *testing.T) {
	f := newFixture(t, options{})
	args := map[string]any{"path": "/tmp/a", "content": "one"}
	first := f.sess.Call(t, "fake.write_file", args)
	wantError(t, first, "confirmation_required")
	if !strings.Contains(text(first), `acting on path "/tmp/a"`) {
		t.Errorf("the refusal does not name the target: %s", text(first))
	}
	tok := mcptest.ConfirmToken(t, first)
	other := map[string]any{"path": "/tmp/a", "content": "two", "confirmToken": tok}
	wantError(t, f.sess.Call(t, "fake.write_file", other), "confirmation_required")
	args["confirmToken"] = tok
	res := f.sess.Call(t, "fake.write_file", args)
	if res.IsError || !strings.Contains(text(res), "wrote /tmp/a") {
		t.Fatalf("confirmed call: %s", text(res))
	}
}

// pinner is a Pinner whose answer the test changes.
type pinner struct {
	mu      sync.Mutex
	hash    string
	allowed bool
	seen    []string
}

func (p *pinner) Check(up string, tool json.RawMessage) (string, bool, string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var t struct{ Name string }
	_ = json.Unmarshal(tool, &t)
	p.seen = append(p.seen, up+"/"+t.Name)
	return p.hash, p.allowed, "its description changed", nil
}

func (p *pinner) set(hash string, allowed bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.hash, p.allowed = hash, allowed
}

// The Pinner's verdict at listing decides: its hash is audited, and a tool
// it refuses is not listed and its call says which upstream changed what.
func TestPinnerVerdictHidesAndIsAudited(t *testing.T) {
	p := &pinner{hash: "h1", allowed: true}
	f := newFixture(t, options{pinner: p})
	f.sess.Call(t, "fake.echo", map[string]any{"text": "x"})
	recs := f.records()
	last := recs[len(recs)-1]
	if last.Upstream != "fake" || last.Pin != "h1" || last.Tool != "fake.echo" || last.ArgsDigest == "" {
		t.Errorf("audit record: %+v", last)
	}

	p = &pinner{hash: "h3", allowed: false}
	f = newFixture(t, options{pinner: p})
	if names := toolNames(t, f); len(names) != 0 {
		t.Fatalf("refused tools are listed: %v", names)
	}
	res := f.sess.Call(t, "fake.echo", map[string]any{"text": "x"})
	wantError(t, res, "failed_precondition")
	if !strings.Contains(text(res), `"echo" of the upstream "fake" is hidden: its description changed`) {
		t.Errorf("refusal does not say what changed: %s", text(res))
	}
	if !strings.Contains(f.log.String(), "upstream tool hidden") || !strings.Contains(f.log.String(), "its description changed") {
		t.Errorf("the log does not say what changed:\n%s", f.log.String())
	}
}

func toolNames(t *testing.T, f *fixture) []string {
	t.Helper()
	return names(t, f.sess)
}

// names lists the tools a session sees.
func names(t *testing.T, s *mcptest.Session) []string {
	t.Helper()
	res, err := s.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, tl := range res.Tools {
		out = append(out, tl.Name)
	}
	return out
}

func TestAuditNamesUpstreamAndPinNeverArgumentValues(t *testing.T) {
	p := &pinner{hash: "pin-abc", allowed: true}
	f := newFixture(t, options{pinner: p})
	f.sess.Call(t, "fake.echo", map[string]any{"text": "VALUE-THAT-MUST-NOT-BE-AUDITED"})
	recs := f.records()
	if len(recs) != 1 {
		t.Fatalf("records: %+v", recs)
	}
	b, _ := json.Marshal(recs[0])
	r := recs[0]
	if r.Upstream != "fake" || r.Pin != "pin-abc" || r.Outcome != audit.OK || r.ArgsDigest == "" || strings.Contains(string(b), "VALUE-THAT") {
		t.Errorf("audit record: %s", b)
	}
}

func TestResultsAreEnvelopedOnEveryChannel(t *testing.T) {
	f := newFixture(t, options{})
	cases := []struct {
		tool     string
		args     map[string]any
		mustNot  []string
		must     []string
		isError  bool
		checkSDK func(*mcp.CallToolResult) string
	}{
		{tool: "fake.inject", mustNot: []string{mcpupstream.Secret}, must: []string{"<untrusted-data"}},
		{tool: "fake.echo", args: map[string]any{"text": "a\u202eb\u200bc " + mcpupstream.Injection}, mustNot: []string{"\u202e", "\u200b"}, must: []string{"<untrusted-data", "[U+202E]"}},
		{tool: "fake.secret", mustNot: []string{mcpupstream.Secret}, must: []string{"[redacted]"}},
		{tool: "fake.resource", must: []string{"comes from mcp-upstream and is untrusted"}},
		{tool: "fake.fail", isError: true, must: []string{"upstream_error", "<untrusted-data"}},
	}
	for _, c := range cases {
		if c.args == nil {
			c.args = map[string]any{}
		}
		res := f.sess.Call(t, c.tool, c.args)
		got := text(res)
		if res.IsError != c.isError {
			t.Errorf("%s: isError=%v: %s", c.tool, res.IsError, got)
		}
		// Exactly one genuine closing tag: the upstream's own was neutralized.
		if n := strings.Count(got, "</untrusted-data>"); n > 1 {
			t.Errorf("%s: %d closing tags (a break-out): %s", c.tool, n, got)
		}
		for _, s := range c.mustNot {
			if strings.Contains(got, s) {
				t.Errorf("%s: result holds %q: %s", c.tool, s, got)
			}
		}
		for _, s := range c.must {
			if !strings.Contains(got, s) {
				t.Errorf("%s: result lacks %q: %s", c.tool, s, got)
			}
		}
		if sc, _ := json.Marshal(res.StructuredContent); strings.Contains(string(sc), mcpupstream.Secret) {
			t.Errorf("%s: structured content holds the secret: %s", c.tool, sc)
		}
	}
}

func TestProgressAndLogsAreRelayedClean(t *testing.T) {
	t.Run("in-process", func(t *testing.T) { progressAndLogs(t, "in-process") })
	t.Run("stdio", func(t *testing.T) { progressAndLogs(t, "stdio") }) // the kernel's fast path: nothing after the result reaches the client
	t.Run("http", func(t *testing.T) { progressAndLogs(t, "http") })   // sent with the call's context, which names its request's stream
}

func progressAndLogs(t *testing.T, tr string) {
	own := tr != "in-process" // the client's own handler sees progress (in-process: the mcptest session's)
	var mu sync.Mutex
	var logs []*mcp.LoggingMessageParams
	var progress []*mcp.ProgressNotificationParams
	copts := &mcp.ClientOptions{LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
		mu.Lock()
		logs = append(logs, r.Params)
		mu.Unlock()
	}}
	if own {
		copts.ProgressNotificationHandler = func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			progress = append(progress, r.Params)
			mu.Unlock()
		}
	}
	f := newFixture(t, options{stdio: tr == "stdio", http: tr == "http", client: copts})
	_ = f.sess.SetLoggingLevel(context.Background(), &mcp.SetLoggingLevelParams{Level: "debug"})
	params := &mcp.CallToolParams{Name: "fake.progress", Arguments: map[string]any{}}
	params.SetProgressToken("client-tok")
	params.Meta[mcp.MetaKeyLogLevel] = "debug"
	res, err := f.sess.CallTool(context.Background(), params)
	if err != nil || res.IsError {
		t.Fatalf("progress: %v %s", err, text(res))
	}
	var got []*mcp.ProgressNotificationParams
	if own { // the client's handlers may run after CallTool returns
		for wait := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			mu.Lock()
			got = progress
			mu.Unlock()
			if len(got) >= 2 || time.Now().After(wait) {
				break
			}
		}
	} else {
		got = f.sess.Progress(2)
	}
	if len(got) < 2 {
		t.Fatalf("progress relayed: %d\n%s", len(got), f.log.String())
	}
	for _, p := range got {
		if p.ProgressToken != "client-tok" || strings.Contains(p.Message, "</untrusted-data>") {
			t.Errorf("progress: token %v message %q", p.ProgressToken, p.Message)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		mu.Lock()
		n := len(logs)
		mu.Unlock()
		if n > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(logs) == 0 {
		t.Fatalf("the upstream's log message was not relayed to the only call in flight; log:\n%s", f.log.String())
	}
	b, _ := json.Marshal(logs[0].Data)
	if strings.Contains(string(b), mcpupstream.Secret) || strings.Contains(string(b), "</untrusted-data>") {
		t.Errorf("relayed log not sanitized: %s", b)
	}
}

func TestImagesPassWithinTheCap(t *testing.T) {
	u := fakeUpstream()
	u.MaxResultBytes = 1 << 20
	f := newFixture(t, options{cfg: gateway.Config{Upstreams: []gateway.Upstream{u}}})
	res := f.sess.Call(t, "fake.image", map[string]any{"bytes": 1000})
	if res.IsError || len(res.Content) < 2 {
		t.Fatalf("small image: %s", text(res))
	}
	if img, ok := res.Content[0].(*mcp.ImageContent); !ok || len(img.Data) != 1000 {
		t.Fatalf("image not passed: %#v", res.Content[0])
	}
	wantError(t, f.sess.Call(t, "fake.image", map[string]any{"bytes": 1100 << 10}), "resource_exhausted")
}

func TestOversizedAndEndlessResultsFailCleanlyAndTheUpstreamRestarts(t *testing.T) {
	u := fakeUpstream()
	u.MaxResultBytes = 100_000
	f := newFixture(t, options{cfg: gateway.Config{Upstreams: []gateway.Upstream{u}}})
	wantError(t, f.sess.Call(t, "fake.big", map[string]any{"bytes": 150_000}), "resource_exhausted")
	start := time.Now()
	res := f.sess.Call(t, "fake.endless", map[string]any{})
	wantError(t, res, "upstream_unavailable")
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the endless answer took %s to be refused", d)
	}
	eventually(t, f)
	wantError(t, f.sess.Call(t, "fake.big", map[string]any{"bytes": 400_000}), "upstream_unavailable") // over the line cap: the child is ended
	eventually(t, f)
}

func TestCrashMidCallGivesAToolErrorAndScrubbedStderr(t *testing.T) {
	f := newFixture(t, options{})
	res := f.sess.Call(t, "fake.crash", map[string]any{})
	wantError(t, res, "upstream_unavailable")
	eventually(t, f)
	log := f.log.String()
	if !strings.Contains(log, "upstream stderr") || !strings.Contains(log, "crashing now") {
		t.Errorf("the child's stderr is not in the log:\n%s", log)
	}
	if strings.Contains(log, mcpupstream.Secret) || strings.Contains(log, testEnv("FAKE_API_TOKEN")) {
		t.Errorf("a secret from the child's stderr reached the log:\n%s", log)
	}
	if !strings.Contains(log, "environment values:") || !strings.Contains(log, "visible") {
		t.Errorf("the child's stderr line with its (non-secret) environment is missing:\n%s", log)
	}
	if !strings.Contains(log, "upstream restarted") {
		t.Errorf("no restart logged:\n%s", log)
	}
}

// Both ways a call reaches a stdio upstream time out the same: the
// gateway's own relayed call (its pooled timer) and the go-sdk's session
// (an upstream that relays questions; a context deadline).
func TestHungUpstreamTimesOutAndOthersGoOn(t *testing.T) {
	for _, relays := range []bool{false, true} {
		t.Run(fmt.Sprintf("relays=%v", relays), func(t *testing.T) {
			u := fakeUpstream()
			u.CallTimeout = gateway.Duration(300 * time.Millisecond)
			u.RelayElicitation = relays
			f := newFixture(t, options{cfg: gateway.Config{Upstreams: []gateway.Upstream{u}}})
			start := time.Now()
			res := f.sess.Call(t, "fake.hang", map[string]any{})
			wantError(t, res, "timeout")
			if !strings.Contains(text(res), "did not answer") {
				t.Errorf("the refusal does not say the upstream did not answer: %s", text(res))
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("a hung upstream held the client %s", d)
			}
			if res := f.sess.Call(t, "fake.echo", map[string]any{"text": "still here"}); res.IsError {
				t.Fatalf("after a hang: %s", text(res))
			}
		})
	}
}

// The target argument is the authorization resource: a policy can allow a
// tool on some paths and not others.
func TestTargetArgumentIsTheAuthorizationResource(t *testing.T) {
	pf := filepath.Join(t.TempDir(), "policy.cedar")
	policy := `permit(principal, action, resource);
forbid(principal, action, resource is Gateway::Target) when { resource.value like "/etc/*" };`
	if err := os.WriteFile(pf, []byte(policy), 0o600); err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, options{kopts: kernel.Options{Authz: &authz.Config{PolicyFile: pf}}})
	wantError(t, f.sess.Call(t, "fake.delete_file", map[string]any{"path": "/etc/passwd"}), "permission_denied")
	wantError(t, f.sess.Call(t, "fake.delete_file", map[string]any{"path": "/tmp/x"}), "confirmation_required")
}

// The upstream can ask the client nothing through the gateway: no roots,
// sampling or elicitation is offered to it (a call during which it asks
// anyway fails: TestUnrelayedQuestionFailsTheCall).
func TestUpstreamCannotAskTheClient(t *testing.T) {
	f := newFixture(t, options{client: &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept"}, nil
		},
	}})
	res := f.sess.Call(t, "fake.ask", map[string]any{})
	if res.IsError || !strings.Contains(text(res), "asked; 0 answered") {
		t.Fatalf("ask: %s", text(res))
	}
	if served(f.ks, "fake.clash") {
		t.Fatal("a tool that takes the kernel's confirmToken argument was exposed")
	}
}

// Every TOML block in the README and docs/gateway.md is a valid
// configuration.
func TestDocumentedConfigsParse(t *testing.T) {
	n := 0
	for _, path := range []string{"../../README.md", "../../docs/gateway.md"} {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		parts := strings.Split(string(b), "```toml\n")
		for _, p := range parts[1:] {
			block, _, _ := strings.Cut(p, "```")
			if _, err := gateway.ParseConfig([]byte(block)); err != nil {
				t.Errorf("%s: %v\n%s", path, err, block)
			}
			n++
		}
	}
	if n < 2 {
		t.Fatalf("found %d TOML blocks", n)
	}
}

// A child that floods its stderr cannot flood the log: lines beyond the
// per-second budget are counted, not logged.
func TestStderrFloodIsBudgeted(t *testing.T) {
	f := newFixture(t, options{})
	if res := f.sess.Call(t, "fake.spew", map[string]any{}); res.IsError {
		t.Fatal(text(res))
	}
	f.sess.Call(t, "fake.crash", map[string]any{}) // ends the child: its stderr reaches EOF
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(f.log.String(), "lines dropped") {
		if time.Now().After(deadline) {
			t.Fatalf("no drop reported:\n%.2000s", f.log.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if n := strings.Count(f.log.String(), "spew line"); n > 200 {
		t.Fatalf("%d of 5000 flooded lines were logged", n)
	}
}

// The kernel's admission applies to relayed tools: a rate limit stops the
// call before anything reaches the upstream, and read-only mode removes
// the tools the configuration does not list as read-only.
func TestKernelGuardsApplyToRelayedTools(t *testing.T) {
	lim, err := ratelimit.NewLimiter(&ratelimit.LimiterOptions{Limit: 2, Window: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, options{kopts: kernel.Options{Limiter: lim, ReadOnly: true}})
	if res := f.sess.Call(t, "fake.echo", map[string]any{"text": "x"}); res.IsError {
		t.Fatal(text(res))
	}
	// The upstream's schema, validated by the kernel before anything is sent.
	wantError(t, f.sess.Call(t, "fake.echo", map[string]any{"text": 5}), "invalid_argument")
	_, err = f.sess.CallTool(context.Background(), &mcp.CallToolParams{Name: "fake.echo", Arguments: map[string]any{"text": "x"}})
	if err == nil || !strings.Contains(err.Error(), "Rate limit exceeded") {
		t.Fatalf("third call: %v", err)
	}
	for _, name := range []string{"fake.write_file", "fake.delete_file"} {
		if served(f.ks, name) {
			t.Errorf("%s registered in read-only mode", name)
		}
	}
}

// TestProgressTokenOnlyWhenAsked: the gateway asks its upstream for
// progress only for a call whose client asked for it (a token the client
// never sees costs the upstream notifications the gateway drops), over the
// in-process transport, over stdio and over Streamable HTTP, and, on a
// 2026-07-28 upstream session, for log messages at the client's own level
// (kernel.Call.LogLevel: none for a call that asked for none, a level the
// MCP levels do not have as debug), or at info for a legacy request, whose
// session holds its level. Progress asked for is relayed on every
// transport (over HTTP it was dropped: the kernel sent it with the relay's
// context, which names no request); logs too
// (TestProgressAndLogsAreRelayedClean).
func TestProgressTokenOnlyWhenAsked(t *testing.T) {
	for _, tr := range []string{"in-process", "stdio", "http"} {
		stdio := tr == "stdio"
		var mu sync.Mutex
		var progress []*mcp.ProgressNotificationParams
		f := newFixture(t, options{stdio: stdio, http: tr == "http", client: &mcp.ClientOptions{
			ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
				mu.Lock()
				progress = append(progress, r.Params)
				mu.Unlock()
			}}})
		// The go-sdk's client speaks 2026-07-28: a call's log level is in
		// its _meta, and the upstream is asked for the client's own, or
		// for none when the call names none.
		got := text(f.sess.Call(t, "fake.meta", map[string]any{}))
		if strings.Contains(got, "progressToken") || strings.Contains(got, "logLevel") {
			t.Errorf("%s: a call without a progress token or a log level: the upstream got %s", tr, got)
		}
		for _, c := range []struct{ asked, sent string }{{"debug", "debug"}, {"error", "error"}, {"loud", "debug"}} {
			params := &mcp.CallToolParams{Name: "fake.meta", Arguments: map[string]any{}, Meta: mcp.Meta{mcp.MetaKeyLogLevel: c.asked}}
			res, err := f.sess.CallTool(context.Background(), params)
			if err != nil {
				t.Fatal(err)
			}
			if got := text(res); !strings.Contains(got, `"io.modelcontextprotocol/logLevel":"`+c.sent+`"`) || strings.Contains(got, "progressToken") {
				t.Errorf("%s: a call at log level %s: the upstream got %s", tr, c.asked, got)
			}
		}
		if tr == "http" { // a legacy request: its session holds the level (info, stateless), so the upstream is asked for info
			body := postLegacyCall(t, f.url, "fake.meta")
			if !strings.Contains(body, `logLevel\":\"info\"`) || strings.Contains(body, "progressToken") {
				t.Errorf("a legacy call: the upstream got %s", body)
			}
		}
		params := &mcp.CallToolParams{Name: "fake.meta", Arguments: map[string]any{}}
		params.SetProgressToken("client-tok")
		res, err := f.sess.CallTool(context.Background(), params)
		if err != nil {
			t.Fatal(err)
		}
		if got := text(res); !strings.Contains(got, `"progressToken":"bulwark-`) || strings.Contains(got, "client-tok") {
			t.Errorf("%s: a call with a progress token: the upstream got %s", tr, got)
		}
		params = &mcp.CallToolParams{Name: "fake.progress", Arguments: map[string]any{}}
		params.SetProgressToken("client-tok")
		if res, err := f.sess.CallTool(context.Background(), params); err != nil || res.IsError {
			t.Fatalf("%s: progress: %v", tr, err)
		}
		deadline := time.Now().Add(5 * time.Second)
		for {
			mu.Lock()
			n := len(progress)
			mu.Unlock()
			if n >= 2 || time.Now().After(deadline) {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		mu.Lock()
		if len(progress) < 2 || progress[0].ProgressToken != "client-tok" {
			t.Errorf("%s: progress relayed: %d", tr, len(progress))
		}
		mu.Unlock()
	}
}

// TestLegacyUpstreamGetsNoLogLevelPerCall: a 2025-11-25 upstream was asked
// for log messages once (logging/setLevel at connect), so its calls carry
// no per-request log level; its log messages are still relayed.
func TestLegacyUpstreamGetsNoLogLevelPerCall(t *testing.T) {
	u := fakeUpstream()
	u.Env = append(u.Env, mcpupstream.VersionsVar)
	u.PublicEnv = append(u.PublicEnv, mcpupstream.VersionsVar)
	getenv := func(n string) string {
		if n == mcpupstream.VersionsVar {
			return "2025-11-25"
		}
		return testEnv(n)
	}
	var mu sync.Mutex
	var logs int
	for _, stdio := range []bool{false, true} {
		f := newFixture(t, options{cfg: gateway.Config{Upstreams: []gateway.Upstream{u}}, getenv: getenv, stdio: stdio,
			client: &mcp.ClientOptions{LoggingMessageHandler: func(context.Context, *mcp.LoggingMessageRequest) {
				mu.Lock()
				logs++
				mu.Unlock()
			}}})
		_ = f.sess.SetLoggingLevel(context.Background(), &mcp.SetLoggingLevelParams{Level: "debug"})
		params := &mcp.CallToolParams{Name: "fake.progress", Arguments: map[string]any{}, Meta: mcp.Meta{mcp.MetaKeyLogLevel: "debug"}} // the client asks per request (2026-07-28)
		if res, err := f.sess.CallTool(context.Background(), params); err != nil || res.IsError {
			t.Fatalf("stdio=%v: %v", stdio, err)
		}
		for wait := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			mu.Lock()
			n := logs
			mu.Unlock()
			if n > 0 || time.Now().After(wait) {
				break
			}
		}
		mu.Lock()
		if logs == 0 {
			t.Errorf("stdio=%v: the legacy upstream's log message was not relayed", stdio)
		}
		logs = 0
		mu.Unlock()
		// After the call above (a log goes to a call only while it is the
		// only one in flight, grace included).
		if got := text(f.sess.Call(t, "fake.meta", map[string]any{})); strings.Contains(got, "logLevel") || strings.Contains(got, "protocolVersion") {
			t.Errorf("stdio=%v: a legacy upstream got %s", stdio, got)
		}
	}
}

// served reports whether ks registers a tool called name.
func served(ks *kernel.Server, name string) bool {
	return slices.ContainsFunc(ks.Tools(), func(t kernel.Tool) bool { return t.Name() == name })
}
