package vdb_test

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/internal/fake/vdbapi"
	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/audit"
	"github.com/bulwarkmcp/bulwark/kernel/mcptest"
	"github.com/bulwarkmcp/bulwark/kernel/seal"
	"github.com/bulwarkmcp/bulwark/kernel/upstream"
	"github.com/bulwarkmcp/bulwark/servers/vdb"
)

// testMaster is the MCP_AEAD_KEY of the tests.
var testMaster = []byte("0123456789abcdef0123456789abcdef-bulwark-vdb-tests")

// clock is a manual clock shared by the fake, the sealer and the server.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// records collects the kernel's audit records.
type records struct {
	mu sync.Mutex
	r  []audit.Record
}

func (r *records) Write(_ context.Context, rec audit.Record) {
	r.mu.Lock()
	r.r = append(r.r, rec)
	r.mu.Unlock()
}
func (r *records) all() []audit.Record {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]audit.Record(nil), r.r...)
}

// fixture is the VDB server over the fake, behind the kernel, with an
// in-process MCP client.
type fixture struct {
	fake   *vdbapi.Server
	srv    *vdb.Server
	sess   *mcptest.Session
	kern   *kernel.Server // for more sessions: mcptest.Connect(t, f.kern, nil)
	clock  *clock
	sealer *seal.Sealer
	keys   vdb.KeyStore
	audit  *records
	key    string // the configured credential ("" none)
}

type setup struct {
	noKey      bool   // start without a configured credential
	credential string // a configured credential other than the org A key
	noSeal     bool
	fopts      *vdbapi.Options
	cfg        vdb.Config
	keys       vdb.KeyStore
	aiKey      string            // with cfg.AIURL: the model endpoint's key
	http       *upstream.Options // the upstream client's options (default: 5 s attempts, no waits, the manual clock)
	// urls, when set, gives the API and site base URLs the server uses
	// from the fake's (a proxy in front of it).
	urls   func(api, site string) (string, string)
	logger *slog.Logger // the kernel's
	// replicas: another fixture's fake and clock, and shared stores
	fake   *vdbapi.Server
	clock  *clock
	grants vdb.GrantStore
}

func newFixture(t testing.TB, su setup) *fixture {
	t.Helper()
	f := &fixture{clock: &clock{t: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)}, audit: &records{}}
	if su.clock != nil {
		f.clock = su.clock
	}
	fo := su.fopts
	if fo == nil {
		fo = &vdbapi.Options{}
	}
	fo.Now = f.clock.Now
	if f.fake = su.fake; f.fake == nil {
		f.fake = vdbapi.Start(t, fo)
	}
	key := f.fake.AddKey(vdbapi.OrgA, "secret-a")
	switch {
	case su.credential != "":
		f.key = su.credential
	case !su.noKey:
		f.key = key
	}
	deps := vdb.Deps{Now: f.clock.Now, Keys: su.keys, AIKey: su.aiKey, HTTP: su.http, Grants: su.grants}
	if deps.HTTP == nil {
		deps.HTTP = &upstream.Options{Timeout: 5 * time.Second, Now: f.clock.Now, Sleep: func(context.Context, time.Duration) error { return nil }}
	}
	if fo.InMemory {
		deps.HTTP.DialContext = f.fake.Dial
	}
	if !su.noSeal {
		s, err := seal.New(testMaster, &seal.Options{Now: f.clock.Now})
		if err != nil {
			t.Fatal(err)
		}
		f.sealer, deps.Sealer = s, s
		if deps.Keys == nil {
			deps.Keys = vdb.NewMemoryKeys(s)
		}
		f.keys = deps.Keys
	}
	cfg := su.cfg
	cfg.APIBaseURL, cfg.SiteBaseURL = f.fake.APIURL(), f.fake.SiteURL()
	if su.urls != nil {
		cfg.APIBaseURL, cfg.SiteBaseURL = su.urls(cfg.APIBaseURL, cfg.SiteBaseURL)
	}
	srv, err := vdb.New(cfg, deps)
	if err != nil {
		t.Fatal(err)
	}
	f.srv = srv
	opts := kernel.Options{Envelope: srv.Envelope(), Credentials: []kernel.Credential{{Name: "vdb", Provider: "Vulnetix", Value: f.key}},
		Audit: f.audit, Logger: su.logger}
	k, err := kernel.New(kernel.Info{Name: "bulwark-vdb", Version: "test"}, srv.Tools(), &opts)
	if err != nil {
		t.Fatal(err)
	}
	f.kern, f.sess = k, mcptest.Connect(t, k, nil)
	return f
}

func (f *fixture) call(t testing.TB, tool string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	if args == nil {
		args = map[string]any{}
	}
	return f.sess.Call(t, tool, args)
}

// ok calls a tool, fails on a tool error and decodes the structured result.
func (f *fixture) ok(t testing.TB, tool string, args map[string]any) map[string]any {
	t.Helper()
	res := f.call(t, tool, args)
	if res.IsError {
		t.Fatalf("%s %v: %s", tool, args, mcptest.Text(res))
	}
	var out map[string]any
	mcptest.Structured(t, res, &out)
	return out
}

// fails calls a tool and asserts a tool error with code; it returns the text.
func (f *fixture) fails(t testing.TB, tool string, args map[string]any, code kernel.Code) string {
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

// apiCalls counts the requests the fake's API host received.
func (f *fixture) apiCalls() int {
	n := 0
	for _, r := range f.fake.Requests() {
		if r.Host == vdbapi.HostAPI {
			n++
		}
	}
	return n
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
		if u != "" && strings.Contains(text, u) {
			t.Fatalf("text holds %q:\n%s", u, text)
		}
	}
}
