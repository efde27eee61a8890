package dns_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/internal/fake/hetznerapi"
	"github.com/bulwarkmcp/bulwark/internal/taint"
	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/confirm"
	"github.com/bulwarkmcp/bulwark/kernel/mcptest"
	"github.com/bulwarkmcp/bulwark/kernel/untrusted"
	"github.com/bulwarkmcp/bulwark/kernel/upstream"
	"github.com/bulwarkmcp/bulwark/servers/dns"
	"github.com/bulwarkmcp/bulwark/servers/dns/hetzner"
)

// The DNS taint harness: a hostile Hetzner Cloud API that echoes the token
// it was sent — configured (with and without the zone allowlist), or
// relayed over HTTP under BYOK — in every
// encoding of internal/taint, in every string of every answer of every
// route the 23 tools reach (zones, RRSets, actions, zone files, label keys,
// error bodies, non-JSON bodies, the headers the server reads), with the
// envelope's closing tag and hidden characters beside it. The checker
// reads every byte the MCP client received (stdio with and without the
// fast path, and HTTP), the kernel's log and the audit records: no secret
// in any decoding, no envelope tag outside the envelope, no hidden
// character. Which upstream fields reach a client is
// testdata/taint-coverage.txt.

// hzProxy stands between the server and the fake Hetzner API and makes
// every answer hostile.
type hzProxy struct {
	enc    taint.Encoding
	secret string // the token every answer echoes
	fake   string // the fake's root URL
	srv    *httptest.Server

	mu       sync.Mutex
	tainted  map[string]bool // fields given a hostile value
	keep     map[string]bool // member paths left as the fake wrote them
	base     map[string]bool // and these, for a whole session
	all      bool            // taint the typed members (times) too
	long     bool            // lengthen each string so that its cut falls in the secret
	untagged bool            // hostile values without the envelope's closing tag
	requests int
}

func newHzProxy(t *testing.T, enc taint.Encoding, fakeURL, secret string) *hzProxy {
	p := &hzProxy{enc: enc, secret: secret, fake: strings.TrimSuffix(fakeURL, hetznerapi.BasePath), tainted: map[string]bool{}}
	p.srv = httptest.NewServer(http.HandlerFunc(p.serve))
	t.Cleanup(p.srv.Close)
	return p
}

// URL is the API base URL the server is given.
func (p *hzProxy) URL() string { return p.srv.URL + hetznerapi.BasePath }

// keeping leaves the member paths given as the fake wrote them until
// the returned function is called: the zone's name, mode and nameservers
// an import is checked against, the status a running action is followed
// by, the error code that selects the API's error shape.
func (p *hzProxy) keeping(members ...string) func() {
	p.mu.Lock()
	p.keep = map[string]bool{}
	for _, m := range members {
		p.keep[m] = true
	}
	p.mu.Unlock()
	return func() {
		p.mu.Lock()
		p.keep = nil
		p.mu.Unlock()
	}
}

// lengthen makes every string long enough to be cut in its secret until
// the returned function is called.
func (p *hzProxy) lengthen() func() {
	p.mu.Lock()
	p.long = true
	p.mu.Unlock()
	return func() {
		p.mu.Lock()
		p.long = false
		p.mu.Unlock()
	}
}

// taintAll taints the typed members too until the returned function is
// called: a time that is not one fails the answer's decoding.
func (p *hzProxy) taintAll() func() {
	p.mu.Lock()
	p.all = true
	p.mu.Unlock()
	return func() {
		p.mu.Lock()
		p.all = false
		p.mu.Unlock()
	}
}

func (p *hzProxy) value(field string) string {
	p.mu.Lock()
	p.tainted[field] = true
	untagged := p.untagged
	p.mu.Unlock()
	v := taint.ValueOf(field, p.enc, p.secret)
	if untagged {
		v = strings.Replace(v, " "+taint.Closing, "", 1)
	}
	return v
}

// withoutTag leaves the envelope's closing tag out of the hostile values
// until the returned function is called: the server drops an error
// message that looks like markup whole, so without it the message reaches
// the client and the gate alone keeps the secret from it.
func (p *hzProxy) withoutTag() func() {
	p.mu.Lock()
	p.untagged = true
	p.mu.Unlock()
	return func() {
		p.mu.Lock()
		p.untagged = false
		p.mu.Unlock()
	}
}

var hzDigits = regexp.MustCompile(`[^A-Za-z_]`)

// hzRoute names a request's path in a hostile token: zone and RRSet
// segments and ids become "$", action names stay.
func hzRoute(path string) string {
	segs := strings.Split(strings.Trim(strings.TrimPrefix(path, hetznerapi.BasePath), "/"), "/")
	var out []string
	for i := 0; i < len(segs); i++ {
		s := segs[i]
		switch {
		case i > 0 && segs[i-1] == "zones" && s != "actions":
			s = "$"
		case i > 0 && (segs[i-1] == "rrsets" || i > 1 && segs[i-2] == "rrsets"):
			s = "$"
		case hzDigits.MatchString(s):
			s = "$"
		}
		out = append(out, s)
	}
	return strings.Join(out, ".")
}

// hzTimes are the members the server decodes as times.
var hzTimes = map[string]bool{"created": true, "started": true, "finished": true, "delegation_last_check": true}

func (p *hzProxy) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	out, err := http.NewRequestWithContext(r.Context(), r.Method, p.fake+r.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	out.Header = r.Header.Clone()
	resp, err := http.DefaultTransport.RoundTrip(out)
	if err != nil {
		http.Error(w, "proxy: "+err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	rt := "Hetzner." + hzRoute(r.URL.EscapedPath())
	p.mu.Lock()
	p.requests++
	p.mu.Unlock()
	// The server reads these headers; each carries a hostile value.
	for _, h := range []string{"Retry-After", "RateLimit-Reset", "Location"} {
		if v := resp.Header.Get(h); v != "" || h != "Location" {
			resp.Header.Set(h, strings.TrimSpace(v+" "+p.value("Hetzner.header:"+strings.ReplaceAll(h, "-", "_"))))
		}
	}
	ct := resp.Header.Get("Content-Type")
	var v any
	switch {
	case strings.Contains(ct, "json") && json.Unmarshal(b, &v) == nil:
		v = p.taintJSON(v, rt+":", "")
		if m, ok := v.(map[string]any); ok {
			m["note"] = p.value(rt + ":note")
			m["echo"] = p.enc.Text(r.Header.Get("Authorization"))
		}
		nb, _ := json.Marshal(v)
		if p.enc.Wire != nil {
			nb = p.enc.Wire(nb, p.enc.Text(p.secret))
		}
		b = nb
	case len(b) > 0 || resp.StatusCode >= 400:
		b = append(b, []byte("\n"+p.value(rt+":body")+"\n"+p.enc.Text(r.Header.Get("Authorization")))...)
	}
	for k, vs := range resp.Header {
		if k != "Content-Length" {
			w.Header()[k] = vs
		}
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = w.Write(b)
}

// taintJSON appends a hostile value to every string of v and adds a
// hostile key to every labels map; prefix is the token's route part,
// member the path so far.
func (p *hzProxy) taintJSON(v any, prefix, member string) any {
	p.mu.Lock()
	keep, all, long := p.keep[member] || p.base[member], p.all, p.long
	p.mu.Unlock()
	leaf := member[strings.LastIndex(member, ".")+1:]
	switch x := v.(type) {
	case string:
		if keep || hzTimes[leaf] && !all {
			return x
		}
		if long { // the envelope cuts a string at MaxString characters: ten into the secret
			head := utf8.RuneCountInString(x+" ") + len("@@"+prefix+member+"@@ ")
			if pad := untrusted.DefaultMaxString - head - 10; pad > 0 {
				x += " " + strings.Repeat("-", pad)
			}
		}
		return x + " " + p.value(prefix+member)
	case []any:
		for i, e := range x {
			x[i] = p.taintJSON(e, prefix, join(member, "$"))
		}
	case map[string]any:
		for k, e := range x {
			x[k] = p.taintJSON(e, prefix, join(member, hzDigits.ReplaceAllString(k, "_")))
		}
		if leaf == "labels" {
			x[p.value(prefix+join(member, "key"))] = "v"
		}
	}
	return v
}

func join(member, k string) string {
	if member == "" {
		return k
	}
	return member + "." + k
}

func TestTaintDNS(t *testing.T) {
	taint.Server(t, "DNS", "./servers/dns -run TestTaintDNS", 60, runDNSEncoding)
}

// runDNSEncoding runs the ways the token reaches the server (configured,
// relayed, with the zone allowlist) in encoding enc and returns the fields whose hostile values reached a
// client and the fields the proxy tainted.
func runDNSEncoding(t *testing.T, enc taint.Encoding) (visited, tainted map[string]bool) {
	var log taint.Buffer // the kernel's log
	logger := slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	audit := &mcptest.AuditLog{}
	var p *hzProxy
	var hc *hetzner.Client
	creds := func(ctx context.Context) (string, error) { return kernel.CredentialFrom(ctx, "hetzner") }
	f := newFixture(t, hetznerOnly(t), setup{
		kopts: kernel.Options{Logger: logger, Audit: audit,
			Credentials: []kernel.Credential{{Name: "hetzner", Provider: "Hetzner", Value: rwToken}}},
		client: func(b backend) dns.Provider {
			p = newHzProxy(t, enc, b.fake.URL(), rwToken)
			c, err := hetzner.New(p.URL(), creds, &hetzner.Options{HTTP: &upstream.Options{Timeout: 10 * time.Second, Sleep: noSleep}})
			if err != nil {
				t.Fatal(err)
			}
			hc = c
			return c
		},
	})
	c := taint.NewChecker(rwToken)
	n := 0
	// 1. The configured token, over stdio (the fast path on and off) and
	// HTTP.
	for _, v := range taint.Versions {
		s := taint.Session{Version: v, Exercise: exerciseDNS(f, p, &n, false)}
		taint.OverStdio(t, f.k, s, false, c)
		taint.OverStdio(t, f.k, s, true, c)
		taint.OverHTTP(t, f.k, s, c)
	}
	// 2. The token relayed over HTTP in X-Hetzner-Api-Token (BYOK).
	relay, err := kernel.New(kernel.Info{Name: "bulwark-dns", Version: "test"}, f.srv.Tools(), &kernel.Options{Envelope: f.srv.Envelope(),
		Confirm: confirm.NewIssuer(nil, nil), BYOK: true, Audit: audit, Logger: logger,
		Credentials: []kernel.Credential{{Name: "hetzner", Provider: "Hetzner", Header: "X-Hetzner-Api-Token"}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range taint.Versions {
		taint.OverHTTP(t, relay, taint.Session{Version: v, Header: http.Header{"X-Hetzner-Api-Token": {rwToken}},
			Exercise: exerciseDNS(f, p, &n, false)}, c)
	}
	// 3. The configured token, with the zone allowlist: zones are
	// resolved and checked by name, actions by the zones they name; those
	// members stay as the API wrote them, everything else is hostile.
	allow := []string{fmt.Sprintf("taint%d.com", n+1), fmt.Sprintf("taint%d.net", n+1)} // the next session's zones
	srvR, err := dns.New(dns.Config{AllowZones: allow}, dns.Deps{Provider: hc, Now: f.clock.Now, Sleep: f.clock.Sleep})
	if err != nil {
		t.Fatal(err)
	}
	restricted, err := kernel.New(kernel.Info{Name: "bulwark-dns", Version: "test"}, srvR.Tools(), &kernel.Options{Envelope: srvR.Envelope(),
		Confirm: confirm.NewIssuer(nil, nil), Audit: audit, Logger: logger,
		Credentials: []kernel.Credential{{Name: "hetzner", Provider: "Hetzner", Value: rwToken}}})
	if err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	p.base = map[string]bool{"zone.name": true, "zones.$.name": true, "action.resources.$.type": true, "actions.$.resources.$.type": true}
	p.mu.Unlock()
	taint.OverHTTP(t, restricted, taint.Session{Version: taint.Versions[1], Exercise: exerciseDNS(f, p, &n, true)}, c)
	audited, _ := json.Marshal(audit.Records())
	c.Text("audit", string(audited))
	c.Text("log", string(log.Bytes()))
	p.mu.Lock()
	defer p.mu.Unlock()
	p.base = nil
	if c.Messages < 200 || p.requests < 200 {
		t.Fatalf("only %d messages read, %d API requests: the run did not happen", c.Messages, p.requests)
	}
	taint.Report(t, enc, c)
	t.Logf("%d messages read, %d API requests, %d of %d tainted fields reached a client", c.Messages, p.requests, len(c.Visited), len(p.tainted))
	return c.Visited, maps.Clone(p.tainted)
}

// dnsCaller calls tools for one session and fails on a protocol error;
// a tool error is an answer like any other.
type dnsCaller struct {
	t      *testing.T
	cs     *mcp.ClientSession
	called map[string]bool
}

func (c dnsCaller) call(tool string, args map[string]any) *mcp.CallToolResult {
	return c.callWith(&mcp.CallToolParams{Name: tool, Arguments: args})
}

func (c dnsCaller) callWith(params *mcp.CallToolParams) *mcp.CallToolResult {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c.called[params.Name] = true
	res, err := c.cs.CallTool(ctx, params)
	if err != nil {
		c.t.Errorf("%s: %v", params.Name, err)
		return &mcp.CallToolResult{IsError: true}
	}
	return res
}

// ok calls a tool that must succeed despite the hostile answers.
func (c dnsCaller) ok(tool string, args map[string]any) *mcp.CallToolResult {
	res := c.call(tool, args)
	if res.IsError {
		c.t.Errorf("%s failed: %s", tool, errorCode(res))
	}
	return res
}

// confirmed runs a gated tool's round trip: the refusal, then the call
// with its token, which must succeed.
func (c dnsCaller) confirmed(tool string, args map[string]any) {
	res := c.call(tool, args)
	var s struct {
		ConfirmToken string `json:"confirmToken"`
	}
	b, _ := json.Marshal(res.StructuredContent)
	_ = json.Unmarshal(b, &s)
	if s.ConfirmToken == "" {
		c.t.Errorf("%s: no confirmation token (%s)", tool, errorCode(res))
		return
	}
	c.ok(tool, with(args, "confirmToken", s.ConfirmToken))
}

// errorCode is a tool error's code, never its text (which holds what the
// hostile API wrote).
func errorCode(res *mcp.CallToolResult) string {
	var s struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	b, _ := json.Marshal(res.StructuredContent)
	_ = json.Unmarshal(b, &s)
	return s.Error.Code
}

// exerciseDNS calls every tool, the gated ones through their confirmation
// round trip, on zones of its own, then each hostile fault.
func exerciseDNS(f *fixture, p *hzProxy, n *int, restricted bool) func(t *testing.T, cs *mcp.ClientSession) {
	return func(t *testing.T, cs *mcp.ClientSession) {
		*n++
		c := dnsCaller{t: t, cs: cs, called: map[string]bool{}}
		zone, sec := fmt.Sprintf("taint%d.com", *n), fmt.Sprintf("taint%d.net", *n)
		www := rrsetArgs(zone, "www", "A")

		// Zones and RRSets, every read and write.
		c.ok("create_zone", map[string]any{"name": zone, "mode": "primary", "ttl": 3600, "labels": map[string]any{"env": "test"}})
		c.ok("list_zones", map[string]any{})
		c.ok("list_zones", map[string]any{"name": zone})
		c.ok("get_zone", map[string]any{"zone": zone})
		c.ok("export_zonefile", map[string]any{"zone": zone})
		c.ok("create_rrset", with(www, "ttl", 300, "records", []any{map[string]any{"value": "198.51.100.1", "comment": "web"}},
			"labels", map[string]any{"role": "web"}))
		c.ok("create_rrset", rrsetArgs(zone, "@", "TXT", "records", recs(`"v=spf1 -all"`)))
		c.ok("list_rrsets", map[string]any{"zone": zone})
		c.ok("get_rrset", www)
		c.ok("update_rrset", with(www, "labels", map[string]any{"role": "www"}))
		c.ok("add_records", with(www, "records", recs("198.51.100.2")))
		c.ok("update_records", with(www, "records", []any{map[string]any{"value": "198.51.100.2", "comment": "second"}}))
		c.ok("change_rrset_ttl", with(www, "ttl", 600))
		c.ok("change_rrset_protection", with(www, "change", true))
		c.confirmed("change_rrset_protection", with(www, "change", false))
		c.confirmed("set_records", with(www, "records", recs("198.51.100.3", "198.51.100.4")))
		c.confirmed("remove_records", with(www, "records", recs("198.51.100.4")))
		c.confirmed("delete_rrset", rrsetArgs(zone, "@", "TXT"))
		c.ok("update_zone", map[string]any{"zone": zone, "labels": map[string]any{"team": "dns"}})
		c.ok("change_zone_ttl", map[string]any{"zone": zone, "ttl": 7200})
		c.ok("change_zone_protection", map[string]any{"zone": zone, "delete": true})
		c.confirmed("change_zone_protection", map[string]any{"zone": zone, "delete": false})

		// An import is checked against the zone's name, mode and assigned
		// nameservers before its token is issued: those stay as the API
		// wrote them; everything else is hostile.
		zf := fakeZonefile(t, f.fake, zone) + "imported 300 IN A 198.51.100.9\n"
		done := p.keeping("zone.name", "zone.mode", "zone.authoritative_nameservers.assigned.$")
		c.confirmed("import_zonefile", map[string]any{"zone": zone, "zonefile": zf})
		done()

		// Actions: listed, read, followed while running (progress), and
		// one that fails (its error is upstream text).
		if restricted {
			c.call("list_zone_actions", map[string]any{}) // refused: it needs a zone
		} else {
			c.ok("list_zone_actions", map[string]any{})
		}
		c.ok("list_zone_actions", map[string]any{"zone": zone, "sort": []any{"id:desc"}})
		acts := f.fake.Actions()
		c.ok("get_zone_action", map[string]any{"action_id": acts[len(acts)-1].ID})
		done = p.keeping("action.status")
		params := &mcp.CallToolParams{Name: "change_zone_ttl", Arguments: map[string]any{"zone": zone, "ttl": 3600}}
		params.SetProgressToken(fmt.Sprintf("taint-%d", *n))
		if res := c.callWith(params); res.IsError {
			t.Errorf("followed change_zone_ttl failed: %s", errorCode(res))
		}
		f.fake.FailNextAction("hostile_failure", "the action failed")
		if res := c.call("change_zone_ttl", map[string]any{"zone": zone, "ttl": 900}); !res.IsError {
			t.Errorf("a failed action succeeded")
		}
		done()

		// A secondary zone: its nameservers change (the preview needs its
		// mode), then it is deleted.
		c.ok("create_zone", map[string]any{"name": sec, "mode": "secondary",
			"primary_nameservers": []any{map[string]any{"address": "198.51.100.53", "port": 53, "tsig_key": "c2VjcmV0LXRzaWc=", "tsig_algorithm": "hmac-sha256"}}})
		done = p.keeping("zone.mode")
		c.confirmed("change_primary_nameservers", map[string]any{"zone": sec,
			"primary_nameservers": []any{map[string]any{"address": "198.51.100.54"}}})
		done()
		c.confirmed("delete_zone", map[string]any{"zone": sec})

		// The API's validation errors carry details.fields; with the code
		// kept, the documented error shape is read member by member.
		done = p.keeping("error.code")
		c.call("create_rrset", rrsetArgs(zone, "bad", "MX", "records", recs("not an mx record")))
		c.call("get_rrset", rrsetArgs(zone, "absent", "A"))
		untag := p.withoutTag()
		c.call("create_rrset", rrsetArgs(zone, "bad", "MX", "records", recs("not an mx record")))
		c.call("get_rrset", rrsetArgs(zone, "absent", "A"))
		untag()
		done()
		c.call("get_rrset", rrsetArgs(zone, "absent", "A"))

		// Strings cut by the envelope, ten characters into the secret.
		done = p.lengthen()
		c.ok("get_rrset", www)
		done()

		// Times are decoded: hostile ones fail the answer.
		done = p.taintAll()
		c.call("get_zone", map[string]any{"zone": zone})
		c.call("get_zone_action", map[string]any{"action_id": acts[len(acts)-1].ID})
		done()

		// The fake's hostile answers.
		faults := []hetznerapi.Fault{
			{Kind: hetznerapi.FaultError, Code: "conflict", Message: "hostile conflict"},
			{Kind: hetznerapi.FaultError, Status: http.StatusTooManyRequests, Code: "rate_limit_exceeded", Message: "slow down"},
			{Kind: hetznerapi.FaultHTML},
			{Kind: hetznerapi.FaultRedirect, Location: "/v1/zones"},
			{Kind: hetznerapi.FaultRaw, Status: http.StatusForbidden, ContentType: "text/plain", Body: "Blocked by WAF"},
			{Kind: hetznerapi.FaultRaw, Status: http.StatusBadRequest, ContentType: "application/json", Body: `{"error":{"code":"Not A Code","message":"m"}}`},
			{Kind: hetznerapi.FaultRaw, ContentType: "application/json", Body: `{"zone":`},
			{Kind: hetznerapi.FaultRaw, ContentType: "text/plain", Body: "plain answer"},
		}
		for i := range 2 { // with and without the closing tag
			untag := func() {}
			if i == 1 {
				untag = p.withoutTag()
			}
			for _, fl := range faults {
				fl.PathPrefix = hetznerapi.BasePath + "/zones/" + zone
				f.fake.AddFault(fl)
				c.call("get_zone", map[string]any{"zone": zone})
				f.fake.ClearFaults()
			}
			untag()
		}
		done = p.keeping("error.code")
		f.fake.AddFault(hetznerapi.Fault{Kind: hetznerapi.FaultError, Code: "protected", Message: "hostile protected",
			PathPrefix: hetznerapi.BasePath + "/zones/" + zone})
		c.call("delete_zone", map[string]any{"zone": zone})
		f.fake.ClearFaults()
		done()

		c.confirmed("delete_zone", map[string]any{"zone": zone})
		everyToolCalled(t, cs, c.called)
	}
}

// everyToolCalled fails when the server lists a tool the session did not
// call: a new tool joins the harness with its first test.
func everyToolCalled(t *testing.T, cs *mcp.ClientSession, called map[string]bool) {
	t.Helper()
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools.Tools {
		if !called[tool.Name] {
			t.Errorf("the harness never calls %s", tool.Name)
		}
	}
	if len(tools.Tools) < 23 {
		t.Errorf("%d tools listed", len(tools.Tools))
	}
}

// fakeZonefile reads zone's file from the fake itself, past the proxy: the
// file an import gives back.
func fakeZonefile(t *testing.T, fake *hetznerapi.Server, zone string) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, fake.URL()+"/zones/"+zone+"/zonefile", nil)
	req.Header.Set("Authorization", "Bearer "+rwToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct{ Zonefile string }
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || out.Zonefile == "" {
		t.Fatalf("the fake's zone file: %v (%d)", err, resp.StatusCode)
	}
	return out.Zonefile
}
