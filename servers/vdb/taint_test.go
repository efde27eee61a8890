package vdb_test

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

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/internal/fake/vdbapi"
	"github.com/bulwarkmcp/bulwark/internal/taint"
	"github.com/bulwarkmcp/bulwark/kernel"
)

// The VDB taint harness: a hostile VDB API that echoes the credential it
// was sent — configured, relayed over HTTP, or the key a sign-in stored —
// in every encoding of internal/taint, in every string of every answer of
// every route the 27 tools and vdb_request reach, in its error bodies, its
// non-JSON bodies and the headers the server reads; with the envelope's
// closing tag and hidden characters beside it. The checker reads every
// byte the MCP client received (stdio with and without the fast path, and
// HTTP), the kernel's log and the audit records: no secret in any
// decoding, no envelope tag outside the envelope, no hidden character.
// Which upstream fields reach a client is testdata/taint-coverage.txt.

// taintProxy stands between the server and the fake and makes every answer
// hostile.
type taintProxy struct {
	enc      taint.Encoding
	secret   string // the credential digest every answer echoes
	echo     string // the whole credential, echoed in one member
	fakeAPI  string
	fakeSite string
	api      *httptest.Server
	site     *httptest.Server
	mu       sync.Mutex
	tainted  map[string]bool // fields given a hostile value
	apiCalls int
}

func newTaintProxy(t *testing.T, enc taint.Encoding, api, site, secret, echo string) *taintProxy {
	p := &taintProxy{enc: enc, secret: secret, echo: echo, fakeAPI: api, fakeSite: site, tainted: map[string]bool{}}
	p.api = httptest.NewServer(p.handler(api, true))
	p.site = httptest.NewServer(p.handler(site, false))
	t.Cleanup(p.api.Close)
	t.Cleanup(p.site.Close)
	return p
}

var digitSegment = regexp.MustCompile(`[^A-Za-z_]`)

// route names a request's path in a hostile token: segments holding
// anything but letters become "$".
func route(path string) string {
	var segs []string
	for s := range strings.SplitSeq(strings.Trim(path, "/"), "/") {
		if digitSegment.MatchString(s) {
			s = "$"
		}
		segs = append(segs, s)
	}
	return strings.Join(segs, ".")
}

func (p *taintProxy) value(field string) string {
	p.mu.Lock()
	p.tainted[field] = true
	p.mu.Unlock()
	return taint.ValueOf(field, p.enc, p.secret)
}

// rewrite puts the proxy's URLs where the fake wrote its own.
func (p *taintProxy) rewrite(s string) string {
	return strings.NewReplacer(p.fakeAPI, p.api.URL, p.fakeSite, p.site.URL).Replace(s)
}

func (p *taintProxy) handler(target string, api bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		out, err := http.NewRequestWithContext(r.Context(), r.Method, target+r.URL.RequestURI(), bytes.NewReader(body))
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
		b = []byte(p.rewrite(string(b)))
		rt := route(r.URL.Path)
		if api {
			p.mu.Lock()
			p.apiCalls++
			p.mu.Unlock()
		}
		// The server reads these headers; each carries a hostile value.
		for _, h := range []string{"X-VDB-Plan", "Cache-Control", "Retry-After", "RateLimit-Reset", "RateLimit-DayLimit", "RateLimit-Remaining", "Location"} {
			if v := resp.Header.Get(h); v != "" || h == "X-VDB-Plan" {
				resp.Header.Set(h, strings.TrimSpace(p.rewrite(v)+" "+p.value("VDB.header:"+strings.ReplaceAll(h, "-", "_"))))
			}
		}
		ct := resp.Header.Get("Content-Type")
		if ct == "text/x-taint" { // a media type that carries the secret
			resp.Header.Set("Content-Type", "text/"+p.enc.Text(p.secret))
		}
		var v any
		switch {
		case strings.Contains(ct, "json") && json.Unmarshal(b, &v) == nil:
			if api {
				v = p.taintJSON(v, "VDB."+rt+":", true)
			}
			if m, ok := v.(map[string]any); ok { // one more member, on both hosts
				m["note"] = p.value("VDB." + rt + ":note")
				m["echo"] = p.enc.Text(p.echo)
			}
			nb, _ := json.Marshal(v)
			if p.enc.Wire != nil {
				nb = p.enc.Wire(nb, p.enc.Text(p.secret))
			}
			b = nb
		case len(b) > 0 || resp.StatusCode >= 400:
			b = append(b, []byte("\n"+p.value("VDB."+rt+":body"))...)
		}
		for k, vs := range resp.Header {
			if k != "Content-Length" {
				w.Header()[k] = vs
			}
		}
		w.WriteHeader(resp.StatusCode)
		_, _ = w.Write(b)
	})
}

// taintJSON appends a hostile value to every string of v; field is the
// token's prefix so far.
func (p *taintProxy) taintJSON(v any, field string, top bool) any {
	switch x := v.(type) {
	case string:
		return x + " " + p.value(strings.TrimSuffix(field, "."))
	case []any:
		for i, e := range x {
			x[i] = p.taintJSON(e, field+"$.", false)
		}
	case map[string]any:
		for k, e := range x {
			x[k] = p.taintJSON(e, field+digitSegment.ReplaceAllString(k, "_")+".", false)
		}
	}
	return v
}

func TestTaintVDB(t *testing.T) {
	taint.Server(t, "VDB", "./servers/vdb -run TestTaintVDB", 50, runVDBEncoding)
}

// runVDBEncoding runs the three ways a credential reaches the server in
// encoding enc and returns the fields whose hostile values reached a client
// and the fields the proxies tainted.
func runVDBEncoding(t *testing.T, enc taint.Encoding) (visited, tainted map[string]bool) {
	visited, tainted = map[string]bool{}, map[string]bool{}
	var log taint.Buffer // the kernel's log
	logger := slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	secretB := "secret-b-" + enc.Name
	digestA, digestB := vdbapi.APIKeyFor(vdbapi.OrgA, "secret-a"), vdbapi.APIKeyFor(vdbapi.OrgB, secretB)
	var proxies []*taintProxy
	proxied := func(digest, echo string) func(api, site string) (string, string) {
		return func(api, site string) (string, string) {
			p := newTaintProxy(t, enc, api, site, digest, echo)
			proxies = append(proxies, p)
			return p.api.URL, p.site.URL
		}
	}
	n := 0

	// 1. The configured key, over stdio (the fast path on and off) and HTTP;
	// 2. the same key relayed over HTTP in X-Vulnetix-Authorization.
	f := newFixture(t, setup{logger: logger, urls: proxied(digestA, "ApiKey "+vdbapi.OrgA+":"+digestA)})
	cA := taint.NewChecker(digestA)
	for _, v := range taint.Versions {
		s := taint.Session{Version: v, Exercise: exerciseVDB(f, &n, nil)}
		taint.OverStdio(t, f.kern, s, false, cA)
		taint.OverStdio(t, f.kern, s, true, cA)
		taint.OverHTTP(t, f.kern, s, cA)
	}
	relay, err := kernel.New(kernel.Info{Name: "bulwark-vdb", Version: "test"}, f.srv.Tools(), &kernel.Options{Envelope: f.srv.Envelope(),
		BYOK: true, Credentials: []kernel.Credential{{Name: "vdb", Provider: "Vulnetix", Header: fwdHeader}}, Audit: f.audit, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range taint.Versions {
		taint.OverHTTP(t, relay, taint.Session{Version: v, Header: http.Header{fwdHeader: {"ApiKey " + f.key}}, Exercise: exerciseVDB(f, &n, nil)}, cA)
	}
	audited, _ := json.Marshal(f.audit.all())
	cA.Text("audit", string(audited))

	// 3. The key a device sign-in stored, over stdio and HTTP: each session
	// signs in first (the /token answer echoes the key too).
	var fB *fixture
	fB = newFixture(t, setup{noKey: true, logger: logger, urls: proxied(digestB, "ApiKey "+vdbapi.OrgB+":"+digestB)})
	keyB := fB.fake.AddKey(vdbapi.OrgB, secretB)
	cB := taint.NewChecker(digestB)
	signIn := func(t *testing.T, cs *mcp.ClientSession) {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "vdb_auth_start", Arguments: map[string]any{}})
		if err != nil || res.IsError {
			t.Fatalf("vdb_auth_start: %v %v", err, res)
		}
		var out struct{ Grant string }
		b, _ := json.Marshal(res.StructuredContent)
		_ = json.Unmarshal(b, &out)
		if err := fB.fake.ApproveDevice(fB.fake.LastUserCode(), keyB); err != nil {
			t.Fatal(err)
		}
		fB.clock.Advance(6 * time.Second)
		res, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "vdb_auth_poll", Arguments: map[string]any{"grant": out.Grant}})
		if err != nil || res.IsError {
			t.Fatalf("vdb_auth_poll: %v %v", err, res)
		}
	}
	for _, v := range taint.Versions {
		s := taint.Session{Version: v, Exercise: exerciseVDB(fB, &n, signIn)}
		taint.OverStdio(t, fB.kern, s, false, cB)
		taint.OverStdio(t, fB.kern, s, true, cB)
		taint.OverHTTP(t, fB.kern, s, cB)
	}
	audited, _ = json.Marshal(fB.audit.all())
	cB.Text("audit", string(audited))

	cA.Text("log", string(log.Bytes()))
	cB.Text("log", string(log.Bytes()))
	for _, c := range []*taint.Checker{cA, cB} {
		if c.Messages < 100 {
			t.Fatalf("only %d messages read: the run did not happen", c.Messages)
		}
		taint.Report(t, enc, c)
		maps.Copy(visited, c.Visited)
	}
	for _, p := range proxies {
		p.mu.Lock()
		maps.Copy(tainted, p.tainted)
		p.mu.Unlock()
	}
	return visited, tainted
}

// exerciseVDB calls every tool, vdb_request and each hostile fault.
func exerciseVDB(f *fixture, n *int, first func(*testing.T, *mcp.ClientSession)) func(t *testing.T, cs *mcp.ClientSession) {
	return func(t *testing.T, cs *mcp.ClientSession) {
		if first != nil {
			first(t, cs)
		}
		call := func(tool string, args map[string]any) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args}); err != nil {
				t.Errorf("%s: %v", tool, err)
			}
		}
		for _, tc := range toolCalls {
			call(tc.tool, tc.args)
		}
		call("vdb_request", map[string]any{"path": "/vuln/" + vdbapi.Log4Shell + "/tree-sitter", "query": map[string]any{"language": "java"}})
		faults := []vdbapi.Fault{
			{Kind: vdbapi.FaultEchoCredential},
			{Kind: vdbapi.FaultRateLimited},
			{Kind: vdbapi.FaultRateLimited, RetryAfter: vdbapi.RetryAfterAbsent},
			{Kind: vdbapi.FaultRaw, ContentType: "text/plain", Body: "raw answer"},
			{Kind: vdbapi.FaultRaw, ContentType: "text/x-taint"},
			{Kind: vdbapi.FaultRedirect, Location: "/v2/kev"},
			{Kind: vdbapi.FaultHTML},
			{Kind: vdbapi.FaultError, Status: 400, Shape: vdbapi.ShapeStandard, Message: "bad"},
			{Kind: vdbapi.FaultError, Status: 404, Shape: vdbapi.ShapeErrorOnly, Message: "missing"},
			{Kind: vdbapi.FaultError, Status: 404, Shape: vdbapi.ShapeV1NotFound, Message: "missing"},
			{Kind: vdbapi.FaultError, Status: 500, Shape: vdbapi.ShapeEmptyError},
			{Kind: vdbapi.FaultError, Status: 400, Shape: vdbapi.ShapeNonJSON, Message: "not json"},
			{Kind: vdbapi.FaultError, Status: 503, Shape: vdbapi.ShapeHTML},
		}
		for _, fl := range faults {
			*n++
			fl.PathPrefix, fl.Times = "/v2/exploits", 0
			f.fake.AddFault(fl)
			call("vdb_exploit_search", map[string]any{"q": fmt.Sprintf("fault-%d", *n)})
			f.fake.ClearFaults()
		}
	}
}
