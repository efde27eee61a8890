package cli

import (
	"bytes"
	"context"
	"flag"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	mdns "github.com/miekg/dns"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/internal/fake/hetznerapi"
	rustpadfake "github.com/bulwarkmcp/bulwark/internal/fake/rustpad"
)

// fakeEnv is a process environment the test can inspect afterwards.
type fakeEnv struct {
	mu   sync.Mutex
	vars map[string]string
}

func (e *fakeEnv) Getenv(k string) string { e.mu.Lock(); defer e.mu.Unlock(); return e.vars[k] }
func (e *fakeEnv) Unsetenv(k string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.vars, k)
	return nil
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

func run(t *testing.T, vars map[string]string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb syncBuffer
	env := &fakeEnv{vars: vars}
	code := Run(context.Background(), Env{Args: args, Getenv: env.Getenv, Unsetenv: env.Unsetenv,
		Stdin: io.NopCloser(strings.NewReader("")), Stdout: nopCloser{&out}, Stderr: &errb})
	return code, out.String(), errb.String()
}

func TestVersionAndHelp(t *testing.T) {
	if code, out, _ := run(t, nil, "version"); code != 0 || !strings.HasPrefix(out, "bulwark ") {
		t.Fatalf("version: %d %q", code, out)
	}
	if code, out, _ := run(t, nil, "help"); code != 0 || !strings.Contains(out, "dns ") {
		t.Fatalf("help: %d %q", code, out)
	}
	code, errOut, _ := run(t, nil, "help", "dns") // on stdout
	if code != 0 {
		t.Fatalf("help dns: %d", code)
	}
	for _, want := range []string{"-http", "[BULWARK_READ_ONLY, or HETZNER_READ_ONLY]", "[DNS_ALLOW_ZONES, or HETZNER_ALLOW_ZONES]", "-hetzner-token-file", "-allow-zones", "-data-dir", "-dns-listen"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("help dns lacks %q", want)
		}
	}
	if code, _, _ := run(t, nil, "nope"); code != 2 {
		t.Fatalf("unknown command: %d", code)
	}
	if code, _, _ := run(t, nil); code != 2 {
		t.Fatalf("no command: %d", code)
	}
}

func TestInvalidConfigurationStops(t *testing.T) {
	const secretURL = "https://user:s3cr3t-in-url@api.example.com/v1"
	cases := []struct {
		name string
		vars map[string]string
		args []string
		want string
	}{
		{"bad boolean", map[string]string{"HETZNER_READ_ONLY": "maybe"}, nil, "HETZNER_READ_ONLY"},
		{"no auth beyond loopback", nil, []string{"-http", "0.0.0.0:0", "-dns-listen", "off", "-data-dir", "DIR"}, "without authentication"},
		{"apikey without file", nil, []string{"-http", "127.0.0.1:0", "-auth", "apikey", "-dns-listen", "off", "-data-dir", "DIR"}, "-api-keys-file"},
		{"cors * with bad origin", nil, []string{"-http", "127.0.0.1:0", "-allowed-origins", "*,https://a.example", "-dns-listen", "off", "-data-dir", "DIR"}, "allowed-origins"},
		{"unknown provider", nil, []string{"-provider", "route53"}, "route53"},
		{"hetzner without token", nil, []string{"-provider", "hetzner"}, "HETZNER_API_TOKEN"},
		{"base URL with credentials", map[string]string{"HETZNER_API_TOKEN": "tok", "HETZNER_API_BASE_URL": secretURL}, nil, "HETZNER_API_BASE_URL"},
		{"oauth without settings", nil, []string{"-http", "127.0.0.1:0", "-auth", "oauth", "-dns-listen", "off", "-data-dir", "DIR"}, "-oauth-resource"},
		{"unreadable JWKS", nil, []string{"-http", "127.0.0.1:0", "-auth", "oauth", "-oauth-resource", "https://mcp.example.com/mcp", "-oauth-issuer", "https://issuer.example.com", "-oauth-jwks", "DIR/missing.json", "-dns-listen", "off", "-data-dir", "DIR"}, "jwks"},
		{"unreachable JWKS URL", nil, []string{"-http", "127.0.0.1:0", "-auth", "oauth", "-oauth-resource", "https://mcp.example.com/mcp", "-oauth-issuer", "https://issuer.example.com", "-oauth-jwks", "http://127.0.0.1:1/jwks.json", "-dns-listen", "off", "-data-dir", "DIR"}, "jwks"},
		{"unreadable keys file", nil, []string{"-http", "127.0.0.1:0", "-auth", "apikey", "-api-keys-file", "DIR/none", "-dns-listen", "off", "-data-dir", "DIR"}, "key"},
		{"bad Redis URL", map[string]string{"BULWARK_REDIS_URL": "rediss://:s3cr3t@[bad"}, []string{"-dns-listen", "off", "-data-dir", "DIR"}, "BULWARK_REDIS_URL"},
		{"unknown tool in allow list", nil, []string{"-allow-tools", "no_such_tool", "-dns-listen", "off", "-data-dir", "DIR"}, "no_such_tool"},
		{"cors * without auth", nil, []string{"-http", "127.0.0.1:0", "-allowed-origins", "*", "-dns-listen", "off", "-data-dir", "DIR"}, "-insecure-allow-any-origin"},
		{"cors * with API keys", nil, []string{"-http", "127.0.0.1:0", "-allowed-origins", "*", "-auth", "apikey", "-api-keys-file", "KEYS", "-dns-listen", "off", "-data-dir", "DIR"}, "-insecure-allow-any-origin"},
		{"unknown store-outage mode", nil, []string{"-store-outage", "maybe", "-dns-listen", "off", "-data-dir", "DIR"}, "-store-outage"},
		{"unknown confirmation path", nil, []string{"-confirm", "person", "-dns-listen", "off", "-data-dir", "DIR"}, "-confirm \"person\""},
		{"weak request-state key", map[string]string{"BULWARK_REQUEST_STATE_KEY": "s3cr3t"}, []string{"-dns-listen", "off", "-data-dir", "DIR"}, "BULWARK_REQUEST_STATE_KEY"},
		{"flood guard off", nil, []string{"-http", "127.0.0.1:0", "-flood-limit", "0", "-dns-listen", "off", "-data-dir", "DIR"}, "-flood-limit"},
		{"write tool allowed in read-only mode", nil, []string{"-read-only", "-allow-tools", "delete_zone", "-dns-listen", "off", "-data-dir", "DIR"}, "delete_zone: -read-only (BULWARK_READ_ONLY or HETZNER_READ_ONLY) is on, so remove the tool from -allow-tools (BULWARK_ALLOW_TOOLS or HETZNER_ALLOW_TOOLS)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := []string{"dns"}
			keys := filepath.Join(t.TempDir(), "keys.txt")
			if err := os.WriteFile(keys, []byte(strings.Repeat("ab", 32)+" pro alice\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			for _, a := range c.args {
				args = append(args, strings.ReplaceAll(strings.ReplaceAll(a, "DIR", t.TempDir()), "KEYS", keys))
			}
			vars := map[string]string{}
			for k, v := range c.vars {
				vars[k] = v
			}
			code, _, errOut := run(t, vars, args...)
			if code != 2 || !strings.Contains(errOut, c.want) {
				t.Fatalf("exit %d, stderr %q", code, errOut)
			}
			if strings.Contains(errOut, "s3cr3t") {
				t.Fatalf("a secret reached stderr: %q", errOut)
			}
		})
	}
}

// session runs `bulwark dns args...` in process over a pipe and returns a
// connected client.
func session(t *testing.T, vars map[string]string, args ...string) (*mcp.ClientSession, *fakeEnv, *syncBuffer) {
	t.Helper()
	return sessionWith(t, nil, vars, args...)
}

// sessionWith is session with the client's options (handlers it declares).
func sessionWith(t *testing.T, copts *mcp.ClientOptions, vars map[string]string, args ...string) (*mcp.ClientSession, *fakeEnv, *syncBuffer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	sr, cw := io.Pipe()
	cr, sw := io.Pipe()
	env := &fakeEnv{vars: vars}
	var stderr syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- Run(ctx, Env{Args: append([]string{"dns"}, args...), Getenv: env.Getenv, Unsetenv: env.Unsetenv, Stdin: sr, Stdout: sw, Stderr: &stderr})
	}()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "cli-test"}, copts).Connect(ctx, &mcp.IOTransport{Reader: cr, Writer: cw}, nil)
	if err != nil {
		cancel()
		t.Fatalf("connect: %v\nstderr: %s", err, stderr.String())
	}
	t.Cleanup(func() {
		cs.Close()
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("bulwark dns did not stop")
		}
	})
	return cs, env, &stderr
}

func call(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) string {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	if res.IsError {
		t.Fatalf("%s failed: %s", name, b.String())
	}
	return b.String()
}

func TestHetznerTokenReadOnceAndRemoved(t *testing.T) {
	api := hetznerapi.Start(t, nil)
	if _, err := api.AddZone(hetznerapi.ZoneSeed{Name: "example.com"}); err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{"HETZNER_API_TOKEN": api.Token(), "HETZNER_API_BASE_URL": api.URL()}
	cs, env, stderr := session(t, vars)
	out := call(t, cs, "list_zones", map[string]any{})
	if !strings.Contains(out, "example.com") || !strings.Contains(out, `<untrusted-data source="hetzner-cloud-api">`) {
		t.Fatalf("list_zones: %s", out)
	}
	for _, k := range []string{"HETZNER_API_TOKEN", "HETZNER_API_BASE_URL"} {
		if env.Getenv(k) != "" {
			t.Errorf("%s still in the environment", k)
		}
	}
	if strings.Contains(stderr.String(), api.Token()) || strings.Contains(out, api.Token()) {
		t.Fatal("the token was printed")
	}
	if !strings.Contains(stderr.String(), "provider=hetzner") || !strings.Contains(stderr.String(), "base_url="+api.URL()) {
		t.Fatalf("startup line: %s", stderr.String())
	}
}

func TestLocalDNSEndToEnd(t *testing.T) {
	dir := t.TempDir()
	cs, _, stderr := session(t, map[string]string{}, "-data-dir", dir, "-dns-listen", "127.0.0.1:0")
	call(t, cs, "create_zone", map[string]any{"name": "example.com", "mode": "primary"})
	call(t, cs, "add_records", map[string]any{"zone": "example.com", "name": "www", "type": "A", "records": []any{map[string]any{"value": "198.51.100.7"}}})
	addr := waitFor(t, stderr, "DNS responder listening")
	m := new(mdns.Msg)
	m.SetQuestion("www.example.com.", mdns.TypeA)
	resp, _, err := new(mdns.Client).Exchange(m, addr)
	if err != nil {
		t.Fatal(err)
	}
	if !resp.Authoritative || len(resp.Answer) != 1 || !strings.Contains(resp.Answer[0].String(), "198.51.100.7") {
		t.Fatalf("answer: %v", resp)
	}
	if !strings.Contains(stderr.String(), "provider=local") || !strings.Contains(stderr.String(), "data_dir="+dir) {
		t.Fatalf("startup: %s", stderr.String())
	}
}

// waitFor waits for a log line and returns its addr= value.
func waitFor(t *testing.T, log *syncBuffer, msg string) string {
	t.Helper()
	for i := 0; i < 500; i++ {
		for _, line := range strings.Split(log.String(), "\n") {
			if strings.Contains(line, msg) {
				_, rest, _ := strings.Cut(line, "addr=")
				addr, _, _ := strings.Cut(rest, " ")
				return addr
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no %q in %s", msg, log.String())
	return ""
}

func TestRustpadEndToEnd(t *testing.T) {
	peer := rustpadfake.Start(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sr, cw := io.Pipe()
	cr, sw := io.Pipe()
	env := &fakeEnv{vars: map[string]string{"RUSTPAD_URL": peer.URL}}
	var stderr syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- Run(ctx, Env{Args: []string{"rustpad"}, Getenv: env.Getenv, Unsetenv: env.Unsetenv, Stdin: sr, Stdout: sw, Stderr: &stderr})
	}()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "cli-test"}, nil).Connect(ctx, &mcp.IOTransport{Reader: cr, Writer: cw}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr.String())
	}
	call(t, cs, "append_to_document", map[string]any{"id": "notes", "text": "hello"})
	if got := peer.Text("notes"); got != "hello" {
		t.Fatalf("pad: %q", got)
	}
	out := call(t, cs, "get_document", map[string]any{"id": "notes"})
	if !strings.Contains(out, `<untrusted-data source="rustpad">`) || !strings.Contains(out, "hello") {
		t.Fatalf("get_document: %s", out)
	}
	cs.Close()
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
}

func TestRustpadNeedsURL(t *testing.T) {
	if code, _, errOut := run(t, map[string]string{}, "rustpad"); code != 2 || !strings.Contains(errOut, "RUSTPAD_URL") {
		t.Fatalf("%d %s", code, errOut)
	}
	if code, _, errOut := run(t, map[string]string{"RUSTPAD_URL": "https://user:pw@pad.example.com"}, "rustpad"); code != 2 || strings.Contains(errOut, "pw@") {
		t.Fatalf("%d %s", code, errOut)
	}
}

func listToolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), &mcp.ListToolsParams{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	return names
}

// TestDNSEnvironmentSelectsTools: the established variables reach the
// kernel — read-only mode registers no write tool, the tool lists choose,
// and the zone allowlist hides other zones.
func TestDNSEnvironmentSelectsTools(t *testing.T) {
	dir := t.TempDir()
	cs, _, _ := session(t, map[string]string{"HETZNER_READ_ONLY": "TRUE"}, "-data-dir", dir, "-dns-listen", "off")
	names := listToolNames(t, cs)
	if len(names) != 7 || slices.Contains(names, "delete_zone") || !slices.Contains(names, "list_zones") {
		t.Fatalf("read-only tools: %v", names)
	}

	cs, _, _ = session(t, map[string]string{"HETZNER_ALLOW_TOOLS": "list_*,create_zone,get_zone", "HETZNER_DENY_TOOLS": "list_zone_actions"}, "-data-dir", dir, "-dns-listen", "off")
	if got := strings.Join(listToolNames(t, cs), ","); got != "create_zone,get_zone,list_rrsets,list_zones" {
		t.Fatalf("allow/deny: %s", got)
	}
	call(t, cs, "create_zone", map[string]any{"name": "example.com", "mode": "primary"})
	call(t, cs, "create_zone", map[string]any{"name": "example.org", "mode": "primary"})

	cs, _, _ = session(t, map[string]string{"HETZNER_ALLOW_ZONES": "example.org"}, "-data-dir", dir, "-dns-listen", "off")
	out := call(t, cs, "list_zones", map[string]any{})
	if strings.Contains(out, "example.com") || !strings.Contains(out, "example.org") {
		t.Fatalf("zone allowlist: %s", out)
	}
}

// TestResponderPortTaken: when the DNS port is taken, bulwark dns says so
// and serves its tools anyway.
func TestResponderPortTaken(t *testing.T) {
	taken, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	cs, _, stderr := session(t, map[string]string{}, "-data-dir", t.TempDir(), "-dns-listen", taken.LocalAddr().String())
	call(t, cs, "create_zone", map[string]any{"name": "example.com", "mode": "primary"})
	if !strings.Contains(stderr.String(), "the DNS responder is off") {
		t.Fatalf("no warning: %s", stderr.String())
	}
}

// TestUnreachableRedisStops: a shared store that does not answer stops
// startup (replicas must not run on private state), with no password shown,
// and the variable is gone from the environment.
func TestUnreachableRedisStops(t *testing.T) {
	vars := map[string]string{"BULWARK_REDIS_URL": "redis://:s3cr3t@127.0.0.1:1/0"}
	code, _, errOut := run(t, vars, "dns", "-dns-listen", "off", "-data-dir", t.TempDir())
	if code == 0 || !strings.Contains(errOut, "shared-state Redis") || strings.Contains(errOut, "s3cr3t") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if _, ok := vars["BULWARK_REDIS_URL"]; ok {
		t.Fatal("BULWARK_REDIS_URL is still in the environment")
	}
}

// A secret variable must be on bootenv.Secrets, or the binary would leave
// it in the environment the kernel shows: reading one that is not panics.
func TestSecretVariableMustBeListed(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("an unlisted secret variable was accepted")
		}
	}()
	var s secret
	newFlags(flag.NewFlagSet("x", flag.ContinueOnError), Env{}).Secret(&s, "x-file", "SOME_TOKEN", "x")
}

// TestNeutralNamesAndAliases: the generic settings have neutral names, the
// established HETZNER_* names stay as aliases, and the two disagreeing is
// an error rather than a silent choice.
func TestNeutralNamesAndAliases(t *testing.T) {
	dir := t.TempDir()
	base := []string{"dns", "-dns-listen", "off", "-data-dir", dir}
	for name, c := range map[string]struct {
		vars map[string]string
		ok   bool
		want string
	}{
		"neutral":       {map[string]string{"BULWARK_DENY_TOOLS": "delete_zone", "DNS_ALLOW_ZONES": "example.com"}, true, ""},
		"alias":         {map[string]string{"HETZNER_DENY_TOOLS": "delete_zone", "HETZNER_ALLOW_ZONES": "example.com"}, true, ""},
		"both agreeing": {map[string]string{"BULWARK_READ_ONLY": "true", "HETZNER_READ_ONLY": "true"}, true, ""},
		"disagreeing":   {map[string]string{"BULWARK_READ_ONLY": "true", "HETZNER_READ_ONLY": "false"}, false, "BULWARK_READ_ONLY and HETZNER_READ_ONLY are both set and disagree"},
		"bad boolean":   {map[string]string{"BULWARK_READ_ONLY": "maybe"}, false, "BULWARK_READ_ONLY or HETZNER_READ_ONLY: \"maybe\" is not a boolean"},
		// Read-only set by either name takes effect: it contradicts the
		// allow list below, and startup says so.
		"neutral takes effect": {map[string]string{"BULWARK_READ_ONLY": "true", "BULWARK_ALLOW_TOOLS": "delete_zone"}, false, "-read-only (BULWARK_READ_ONLY or HETZNER_READ_ONLY) is on"},
		"alias takes effect":   {map[string]string{"HETZNER_READ_ONLY": "true", "HETZNER_ALLOW_TOOLS": "delete_zone"}, false, "-read-only (BULWARK_READ_ONLY or HETZNER_READ_ONLY) is on"},
	} {
		t.Run(name, func(t *testing.T) {
			code, out, errOut := run(t, c.vars, append([]string{"doctor"}, base...)...)
			if c.ok {
				if code != 0 || strings.Contains(out, "FAIL") {
					t.Fatalf("exit %d\n%s%s", code, out, errOut)
				}
				return
			}
			if code == 0 || !strings.Contains(out+errOut, c.want) {
				t.Fatalf("exit %d, want %q in:\n%s%s", code, c.want, out, errOut)
			}
		})
	}
}
