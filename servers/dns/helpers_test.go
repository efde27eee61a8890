package dns_test

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/internal/fake/hetznerapi"
	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/confirm"
	"github.com/bulwarkmcp/bulwark/kernel/mcptest"
	"github.com/bulwarkmcp/bulwark/kernel/upstream"
	"github.com/bulwarkmcp/bulwark/servers/dns"
	"github.com/bulwarkmcp/bulwark/servers/dns/hetzner"
	"github.com/bulwarkmcp/bulwark/servers/dns/localzone"
)

const (
	rwToken = "hzTEST-rw-token-0123456789abcdef0123456789abcdef0123456789abcd"
	roToken = "hzTEST-ro-token-fedcba9876543210fedcba9876543210fedcba98765432"
	// marker is planted in upstream values; no refusal may quote it.
	marker = "MARKER-7f3a"
)

// fullProvider is a provider with every capability, as the hetzner and
// local providers are.
type fullProvider interface {
	dns.Provider
	dns.ZoneManager
	dns.Importer
	dns.Labeler
	dns.Protector
	dns.Commenter
	dns.SecondaryManager
	dns.ActionLog
}

// backend is one provider under test.
type backend struct {
	name string
	p    fullProvider
	fake *hetznerapi.Server // nil for the local provider
}

// backendMaker builds a fresh backend; the table lists every provider.
type backendMaker struct {
	name string
	make func(t *testing.T, opts *hetznerapi.Options) backend
}

var backends = []backendMaker{
	{"hetzner", newHetzner},
	{"local", newLocal},
}

func noSleep(context.Context, time.Duration) error { return nil }

func newHetzner(t *testing.T, opts *hetznerapi.Options) backend {
	t.Helper()
	if opts == nil {
		opts = &hetznerapi.Options{}
	}
	opts.Token, opts.ReadOnlyToken = rwToken, roToken
	fake := hetznerapi.Start(t, opts)
	return backend{name: "hetzner", p: hetznerClient(t, fake, rwToken, 5*time.Second), fake: fake}
}

func hetznerClient(t *testing.T, fake *hetznerapi.Server, token string, timeout time.Duration) *hetzner.Client {
	t.Helper()
	c, err := hetzner.New(fake.URL(), hetzner.StaticToken(token),
		&hetzner.Options{HTTP: &upstream.Options{Timeout: timeout, Sleep: noSleep}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func newLocal(t *testing.T, _ *hetznerapi.Options) backend {
	t.Helper()
	p, err := localzone.New(t.TempDir(), &localzone.Options{DisableSync: true})
	if err != nil {
		t.Fatal(err)
	}
	return backend{name: "local", p: p}
}

// forEach runs fn once per provider.
func forEach(t *testing.T, fn func(t *testing.T, mk backendMaker)) {
	for _, mk := range backends {
		t.Run(mk.name, func(t *testing.T) { fn(t, mk) })
	}
}

// fakeClock advances only when the server sleeps.
type fakeClock struct {
	mu     sync.Mutex
	t      time.Time
	sleeps int
	// block makes Sleep wait for its context to end; cancelled counts
	// the sleeps that ended so.
	block     bool
	cancelled int
	// entered, when set, hears of each blocking sleep as it starts.
	entered chan struct{}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	block, entered := c.block, c.entered
	c.mu.Unlock()
	if block {
		if entered != nil {
			entered <- struct{}{}
		}
		<-ctx.Done()
		c.mu.Lock()
		c.cancelled++
		c.mu.Unlock()
		return ctx.Err()
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
	c.sleeps++
	return nil
}

// fixture is a DNS server over one backend, behind the kernel, with an
// in-process MCP client.
type fixture struct {
	backend
	srv   *dns.Server
	k     *kernel.Server
	sess  *mcptest.Session
	clock *fakeClock
}

// setup configures a fixture; all fields are optional.
type setup struct {
	cfg    dns.Config
	kopts  kernel.Options
	hopts  *hetznerapi.Options
	before func(b backend) // seeds state before the server starts
	// client, when set, is the provider the server uses instead of the
	// backend's own (another token, a shorter timeout); seeding still goes
	// through the backend's.
	client func(b backend) dns.Provider
}

func newFixture(t *testing.T, mk backendMaker, su setup) *fixture {
	t.Helper()
	f := &fixture{backend: mk.make(t, su.hopts), clock: &fakeClock{t: time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)}}
	if su.before != nil {
		su.before(f.backend)
	}
	f.start(t, su)
	return f
}

func (f *fixture) start(t *testing.T, su setup) {
	t.Helper()
	var p dns.Provider = f.p
	if su.client != nil {
		p = su.client(f.backend)
	}
	srv, err := dns.New(su.cfg, dns.Deps{Provider: p, Now: f.clock.Now, Sleep: f.clock.Sleep})
	if err != nil {
		t.Fatal(err)
	}
	opts := su.kopts
	opts.Envelope = srv.Envelope()
	if opts.Confirm == nil {
		opts.Confirm = confirm.NewIssuer(nil, nil)
	}
	k, err := kernel.New(kernel.Info{Name: "bulwark-dns", Version: "test"}, srv.Tools(), &opts)
	if err != nil {
		t.Fatal(err)
	}
	f.srv, f.k = srv, k
	f.sess = mcptest.Connect(t, k, nil)
}

// call calls a tool and returns the result.
func (f *fixture) call(t *testing.T, tool string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	return f.sess.Call(t, tool, args)
}

// ok calls a tool, fails on a tool error and decodes the structured result.
func (f *fixture) ok(t *testing.T, tool string, args map[string]any, out any) string {
	t.Helper()
	res := f.call(t, tool, args)
	if res.IsError {
		t.Fatalf("%s %v: %s", tool, args, mcptest.Text(res))
	}
	if out != nil {
		mcptest.Structured(t, res, out)
	}
	return mcptest.Text(res)
}

// confirmed calls a gated tool twice: the refusal, then with its token.
func (f *fixture) confirmed(t *testing.T, tool string, args map[string]any, out any) string {
	t.Helper()
	tok := token(t, f.call(t, tool, args))
	return f.ok(t, tool, with(args, "confirmToken", tok), out)
}

// fails calls a tool and asserts a tool error with code; it returns the text.
func (f *fixture) fails(t *testing.T, tool string, args map[string]any, code kernel.Code) string {
	t.Helper()
	res := f.call(t, tool, args)
	text := mcptest.Text(res)
	if !res.IsError {
		t.Fatalf("%s %v succeeded, want %s: %s", tool, args, code, text)
	}
	var s struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	mcptest.Structured(t, res, &s)
	if s.Error.Code != string(code) {
		t.Fatalf("%s %v: code %q, want %q: %s", tool, args, s.Error.Code, code, text)
	}
	return text
}

func token(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	return mcptest.ConfirmToken(t, res)
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

func recs(values ...string) []any {
	out := make([]any, len(values))
	for i, v := range values {
		out[i] = map[string]any{"value": v}
	}
	return out
}

func contains(t *testing.T, text string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(text, w) {
			t.Fatalf("text lacks %q:\n%s", w, text)
		}
	}
}

func lacks(t *testing.T, text string, unwanted ...string) {
	t.Helper()
	for _, u := range unwanted {
		if strings.Contains(text, u) {
			t.Fatalf("text holds %q:\n%s", u, text)
		}
	}
}

// Seeding goes through the Provider interface, so it works on every backend.

func ctx() context.Context { return context.Background() }

func seedZone(t *testing.T, b backend, name string) dns.Zone {
	t.Helper()
	z, a, err := b.p.CreateZone(ctx(), dns.CreateZoneRequest{Name: name, Mode: dns.ModePrimary})
	if err != nil {
		t.Fatalf("seeding zone %s: %v", name, err)
	}
	settle(t, b, a)
	return z
}

func seedSecondary(t *testing.T, b backend, name string) dns.Zone {
	t.Helper()
	z, a, err := b.p.CreateZone(ctx(), dns.CreateZoneRequest{Name: name, Mode: dns.ModeSecondary,
		PrimaryNameservers: []dns.PrimaryNameserver{{Address: "198.51.100.53", Port: 53, TSIGKey: "c2VjcmV0LXRzaWc=", TSIGAlgorithm: "hmac-sha256"}}})
	if err != nil {
		t.Fatalf("seeding secondary zone %s: %v", name, err)
	}
	settle(t, b, a)
	return z
}

func seedRecords(t *testing.T, b backend, zone, name, typ string, ttl int, records ...dns.Record) {
	t.Helper()
	a, err := b.p.AddRecords(ctx(), zone, name, typ, records, &ttl)
	if err != nil {
		t.Fatalf("seeding %s/%s in %s: %v", name, typ, zone, err)
	}
	settle(t, b, a)
}

func protectRRSet(t *testing.T, b backend, zone, name, typ string) {
	t.Helper()
	a, err := b.p.ChangeRRSetProtection(ctx(), zone, name, typ, true)
	if err != nil {
		t.Fatal(err)
	}
	settle(t, b, a)
}

func protectZone(t *testing.T, b backend, zone string) {
	t.Helper()
	a, err := b.p.ChangeZoneProtection(ctx(), zone, true)
	if err != nil {
		t.Fatal(err)
	}
	settle(t, b, a)
}

// settle waits for a seeding action to finish.
func settle(t *testing.T, b backend, a *dns.Action) {
	t.Helper()
	for a != nil && a.Status == dns.ActionRunning {
		next, err := b.p.GetAction(ctx(), a.ID)
		if err != nil {
			t.Fatal(err)
		}
		a = &next
	}
}

// standard seeds example.com with www/A (2 records, TTL 300) and a TXT.
func standard(t *testing.T) func(b backend) {
	return func(b backend) {
		seedZone(t, b, "example.com")
		seedRecords(t, b, "example.com", "www", "A", 300, dns.Record{Value: "198.51.100.1"}, dns.Record{Value: "198.51.100.2"})
		seedRecords(t, b, "example.com", "@", "TXT", 600, dns.Record{Value: `"v=spf1 -all"`, Comment: "spf"})
	}
}

// zoneID is the zone's id as a string.
func zoneID(t *testing.T, b backend, name string) string {
	t.Helper()
	z, err := b.p.GetZone(ctx(), name)
	if err != nil {
		t.Fatal(err)
	}
	return formatID(z.ID)
}

func formatID(id int64) string { return strconv.FormatInt(id, 10) }
