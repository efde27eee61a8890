package kernel_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/confirm"
	"github.com/bulwarkmcp/bulwark/kernel/httpguard"
	"github.com/bulwarkmcp/bulwark/kernel/identity"
	"github.com/bulwarkmcp/bulwark/kernel/mcptest"
	"github.com/bulwarkmcp/bulwark/kernel/ratelimit"
	"github.com/bulwarkmcp/bulwark/kernel/untrusted"
)

const fastAddr = "127.0.0.1:8080"

// fastPair is the same server twice: one HTTP handler with the fast path,
// one without. Both start from the same state (deterministic tokens, a
// fixed clock), so the same requests in the same order must get the same
// answers.
type fastPair struct {
	fast, sdk       http.Handler
	fastSrv, sdkSrv *kernel.Server // their servers, for kernel.FastAnswered
}

func newFastPair(t testing.TB, limit int) fastPair {
	t.Helper()
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	var p fastPair
	build := func(disable bool) http.Handler {
		srv := fastServer(t, limit, clock)
		if disable {
			p.sdkSrv = srv
		} else {
			p.fastSrv = srv
		}
		keys, err := identity.ParseAPIKeys(strings.NewReader(identity.HashKey(apiKey) + " pro alice\n" + identity.HashKey(freeKey) + " free bob\n"))
		if err != nil {
			t.Fatal(err)
		}
		h, err := srv.HTTPHandler(kernel.HTTPOptions{Addr: fastAddr, Auth: keys, DisableFastPath: disable,
			Guards: httpguard.PipelineOptions{DisableFlood: true}})
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	p.fast, p.sdk = build(false), build(true)
	return p
}

// fastServer is the server the differential tests run: the test tools and
// a few more, tiers, a limiter, deterministic tokens and a fixed clock.
func fastServer(t testing.TB, limit int, clock func() time.Time) *kernel.Server {
	t.Helper()
	tiers, _ := ratelimit.NewTiers("free", "pro")
	lim, err := ratelimit.NewLimiter(&ratelimit.LimiterOptions{Limit: limit, Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	tools := append(testTools(new([]string)), kernel.NewTool(kernel.Spec[itemArgs, map[string]string]{
		Name: "pro_report", Description: "A tool for the pro plan.",
		Policy: kernel.Policy{ReadOnly: kernel.Yes, Destructive: kernel.No, Idempotent: kernel.Yes, OpenWorld: kernel.No, Confirm: kernel.Never, Tier: "pro"},
		Handle: func(context.Context, *kernel.Call, itemArgs) (map[string]string, error) {
			return map[string]string{"report": "<ok> & done"}, nil
		},
	}), kernel.NewTool(kernel.Spec[itemArgs, map[string]string]{
		Name: "odd_chars", Description: "A result with every character class the result encoder escapes.",
		Policy: readPolicy,
		Handle: func(context.Context, *kernel.Call, itemArgs) (map[string]string, error) {
			return map[string]string{"v": oddChars, oddChars: "key"}, nil
		},
	}), kernel.NewTool(kernel.Spec[itemArgs, map[string]string]{
		Name: "progress_steps", Description: "Reports progress four times, then answers (or fails when name is fail).",
		Policy: readPolicy,
		Handle: func(ctx context.Context, c *kernel.Call, in itemArgs) (map[string]string, error) {
			for i := 1; i <= 4; i++ {
				c.Progress(ctx, float64(i), 4, "step "+strconv.Itoa(i)+" "+oddChars)
			}
			if in.Name == "fail" {
				return nil, kernel.Errorf(kernel.NotFound, "Item %q was not found.", in.Name)
			}
			return map[string]string{"done": in.Name}, nil
		},
	}), kernel.NewTool(kernel.Spec[itemArgs, kernel.Text]{
		Name: "odd_text", Description: "The same as text.", Policy: readPolicy,
		Handle: func(context.Context, *kernel.Call, itemArgs) (kernel.Text, error) { return kernel.Text(oddChars), nil },
	}))
	srv, err := kernel.New(kernel.Info{Name: "test", Version: "v0", Instructions: "Use <get_item> & \u2028 friends."}, tools, &kernel.Options{
		Tiers: tiers, Limiter: lim, Now: clock, Envelope: untrusted.Envelope{Source: "test-api"},
		Confirm: confirm.NewIssuer(nil, &confirm.Options{Rand: &mcptest.CountingReader{}, Now: clock}),
	})
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

// fastRequest is one HTTP request of the differential test.
type fastRequest struct {
	name    string
	body    string
	version string            // MCP-Protocol-Version; "" sends none
	header  map[string]string // more headers; "" values delete
	mirror  bool              // send Mcp-Method and Mcp-Name from the body
}

func (q fastRequest) build() *http.Request {
	r := httptest.NewRequest("POST", "http://"+fastAddr+kernel.MCPPath, strings.NewReader(q.body))
	r.RemoteAddr = "127.0.0.1:40000"
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	r.Header.Set("Authorization", "Bearer "+apiKey)
	if q.version != "" {
		r.Header.Set("Mcp-Protocol-Version", q.version)
	}
	if q.mirror {
		if env, err := httpguard.ParseMessage([]byte(q.body)); err == nil {
			r.Header.Set("Mcp-Method", env.Method)
			if target, ok := env.Target(); ok {
				r.Header.Set("Mcp-Name", httpguard.EncodeHeaderValue(target))
			}
		}
	}
	for k, v := range q.header {
		if v == "" {
			r.Header.Del(k)
			continue
		}
		r.Header.Set(k, v)
	}
	return r
}

// exchange is what the comparison reads from a response.
type exchange struct {
	Status int
	Header map[string][]string
	Body   string
}

// fastNormal removes what differs between two runs by design: internal
// error ids (random) and event-stream ids (a random stream name).
var fastNormal = []struct {
	re   *regexp.Regexp
	repl string
}{
	{regexp.MustCompile(`Error id: [0-9A-Za-z_-]+`), "Error id: ID"},
	{regexp.MustCompile(`("id":")[0-9A-Za-z_-]{6,}(")`), "${1}ID$2"},
	{regexp.MustCompile(`(?m)^id: .*$`), "id: ID"},
}

func (p fastPair) serve(q fastRequest, fast bool) exchange {
	h := p.sdk
	if fast {
		h = p.fast
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, q.build())
	ex := exchange{Status: rec.Code, Header: map[string][]string{}, Body: rec.Body.String()}
	for k, v := range rec.Header() {
		if k == "Content-Type" || k == "Cache-Control" || k == "Connection" || k == "Retry-After" || k == "Www-Authenticate" || k == "Allow" || strings.HasPrefix(k, "Mcp-") {
			ex.Header[k] = v
		}
	}
	for _, n := range fastNormal {
		ex.Body = n.re.ReplaceAllString(ex.Body, n.repl)
	}
	return ex
}

// compare sends q through both handlers and fails on any difference.
func (p fastPair) compare(t testing.TB, q fastRequest) exchange {
	t.Helper()
	want, got := p.serve(q, false), p.serve(q, true)
	wb, _ := json.Marshal(want)
	gb, _ := json.Marshal(got)
	if string(wb) != string(gb) {
		t.Errorf("%s: fast path differs from the go-sdk path\nsdk:  %s\nfast: %s", q.name, wb, gb)
	}
	return got
}

func call(id, name, args string, meta string) string {
	params := `{"name":` + name
	if args != "" {
		params += `,"arguments":` + args
	}
	if meta != "" {
		params += `,"_meta":` + meta
	}
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":` + params + `}}`
}

// oddChars holds every class of character encoding/json escapes or
// replaces, for the fast path's own result encoder (appendCallResult).
const oddChars = "<a href=\"x\">&amp;</a> \\ \b\f\n\r\t \x00\x01\x1f\x7f \u2028\u2029 é 😀 \xff\xfe"

const modernMeta = `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`

// fastTable is the hostile and ordinary requests, each in both protocol
// versions where that means something.
func fastTable() []fastRequest {
	item := `{"zone":"example.com","name":"www"}`
	var qs []fastRequest
	for _, v := range []struct{ version, meta string }{{"2025-11-25", ""}, {"2026-07-28", modernMeta}} {
		add := func(name, body string, header map[string]string) {
			qs = append(qs, fastRequest{name: v.version + " " + name, body: body, version: v.version, header: header, mirror: true})
		}
		m := v.meta
		add("read", call(`1`, `"get_item"`, item, m), nil)
		add("text result", call(`2`, `"export_item"`, item, m), nil)
		add("truncated", call(`3`, `"list_items"`, `{"count":1}`, m), nil)
		add("internal error", call(`4`, `"broken"`, item, m), nil)
		add("upstream error", call(`5`, `"refused_upstream"`, item, m), nil)
		add("gated", call(`6`, `"delete_item"`, item, m), nil)
		add("gated bad token", call(`7`, `"delete_item"`, `{"zone":"example.com","name":"www","confirmToken":"AAAA"}`, m), nil)
		add("unknown tool", call(`8`, `"no_such_tool"`, item, m), nil)
		add("no arguments", call(`9`, `"list_items"`, ``, m), nil)
		add("null arguments", call(`10`, `"list_items"`, `null`, m), nil)
		add("arguments array", call(`11`, `"get_item"`, `[1,2]`, m), nil)
		add("arguments string", call(`12`, `"get_item"`, `"x"`, m), nil)
		add("missing required", call(`13`, `"get_item"`, `{"zone":"z"}`, m), nil)
		add("wrong type", call(`14`, `"change_ttl"`, `{"zone":"z","ttl":"300"}`, m), nil)
		add("below minimum", call(`15`, `"change_ttl"`, `{"zone":"z","ttl":5}`, m), nil)
		add("unknown property", call(`16`, `"get_item"`, `{"zone":"z","name":"n","extra":1}`, m), nil)
		add("repeated argument key", call(`17`, `"get_item"`, `{"zone":"z","zone":"y","name":"n"}`, m), nil)
		add("arguments with spaces", call(`18`, `"get_item"`, "{ \"zone\" : \"z\",\n \"name\":\"n\" }", m), nil)
		add("name not a string", call(`19`, `5`, item, m), nil)
		add("string id", call(`"a-1"`, `"get_item"`, item, m), nil)
		add("escaped string id", call(`"\u00e9\u2028<>&\/"`, `"get_item"`, item, m), nil)
		add("lone surrogate id", call(`"\ud800x"`, `"get_item"`, item, m), nil)
		add("invalid UTF-8 id", call("\"\xff\"", `"get_item"`, item, m), nil)
		add("negative id", call(`-5`, `"get_item"`, item, m), nil)
		add("minus zero id", call(`-0`, `"get_item"`, item, m), nil)
		add("2^53 id", call(`9007199254740992`, `"get_item"`, item, m), nil)
		add("fractional id", call(`1.5`, `"get_item"`, item, m), nil)
		add("null id", call(`null`, `"get_item"`, item, m), nil)
		add("tier refusal", call(`20`, `"pro_report"`, item, m), map[string]string{"Authorization": "Bearer " + freeKey})
		add("tier allowed", call(`21`, `"pro_report"`, item, m), nil)
		add("unauthenticated", call(`22`, `"get_item"`, item, m), map[string]string{"Authorization": ""})
		add("progress token", strings.Replace(call(`23`, `"get_item"`, item, m), `"name":`, `"_meta":{"progressToken":"p"},"name":`, 1), nil)
		add("task param", strings.Replace(call(`24`, `"get_item"`, item, m), `"name":`, `"task":{"ttl":1},"name":`, 1), nil)
		add("ping", `{"jsonrpc":"2.0","id":30,"method":"ping"}`, nil)
		add("ping with meta", `{"jsonrpc":"2.0","id":31,"method":"ping","params":{"_meta":`+orEmpty(m)+`}}`, nil)
		add("tools/list", `{"jsonrpc":"2.0","id":32,"method":"tools/list"}`, nil)
		add("tools/list with meta", `{"jsonrpc":"2.0","id":33,"method":"tools/list","params":{"_meta":`+orEmpty(m)+`}}`, nil)
		add("tools/list cursor", `{"jsonrpc":"2.0","id":34,"method":"tools/list","params":{"cursor":"bogus"}}`, nil)
		add("notification", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, nil)
		add("response", `{"jsonrpc":"2.0","id":35,"result":{}}`, nil)
		add("malformed JSON", `{"jsonrpc":"2.0","id":36,"method":`, nil)
		add("batch", `[`+call(`37`, `"get_item"`, item, m)+`]`, nil)
		add("params array", `{"jsonrpc":"2.0","id":38,"method":"tools/call","params":[1]}`, nil)
		add("resources/list", `{"jsonrpc":"2.0","id":39,"method":"resources/list"}`, nil)
		add("initialize", `{"jsonrpc":"2.0","id":40,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`, nil)
		add("Last-Event-ID", call(`41`, `"get_item"`, item, m), map[string]string{"Last-Event-ID": "x"})
		add("Mcp-Param header", call(`42`, `"get_item"`, item, m), map[string]string{"Mcp-Param-Zone": "example.com"})
		add("Mcp-Name mismatch", call(`43`, `"get_item"`, item, m), map[string]string{"Mcp-Name": "export_item"})
		add("Mcp-Method missing", call(`44`, `"get_item"`, item, m), map[string]string{"Mcp-Method": ""})
		add("no Accept", call(`45`, `"get_item"`, item, m), map[string]string{"Accept": ""})
		add("html in result", call(`46`, `"pro_report"`, item, m), nil)
		add("odd characters in structured result", call(`47`, `"odd_chars"`, item, m), nil)
		add("odd characters in text result", call(`48`, `"odd_text"`, item, m), nil)
		prog := func(tok string) string { return withMeta(m, `"progressToken":`+tok) }
		add("progress steps", call(`60`, `"progress_steps"`, item, prog(`"p"`)), nil)
		add("progress steps number token", call(`61`, `"progress_steps"`, item, prog(`7`)), nil)
		add("progress steps fractional token", call(`62`, `"progress_steps"`, item, prog(`1.5`)), nil)
		add("progress steps exponent token", call(`63`, `"progress_steps"`, item, prog(`1e3`)), nil)
		add("progress steps escaped token", call(`64`, `"progress_steps"`, item, prog(`"\u003c\u2028\ud800"`)), nil)
		add("progress steps object token", call(`65`, `"progress_steps"`, item, prog(`{"a":1}`)), nil)
		add("progress steps null token", call(`66`, `"progress_steps"`, item, prog(`null`)), nil)
		add("progress steps bool token", call(`67`, `"progress_steps"`, item, prog(`true`)), nil)
		add("progress then tool error", call(`68`, `"progress_steps"`, `{"zone":"z","name":"fail"}`, prog(`"p"`)), nil)
		add("progress and log level", call(`69`, `"progress_steps"`, item, withMeta(prog(`"p"`), `"io.modelcontextprotocol/logLevel":"debug"`)), nil)
		add("progress tier refusal", call(`90`, `"pro_report"`, item, prog(`"p"`)), map[string]string{"Authorization": "Bearer " + freeKey})
		add("progress validation failure", call(`91`, `"progress_steps"`, `{"zone":"z"}`, prog(`"p"`)), nil)
		add("progress unknown tool", call(`92`, `"no_such_tool"`, item, prog(`"p"`)), nil)
		add("progress gated", call(`93`, `"delete_item"`, item, prog(`"p"`)), nil)
		add("progress handler without progress", call(`94`, `"get_item"`, item, prog(`"p"`)), nil)
		add("progress internal error", call(`95`, `"broken"`, item, prog(`"p"`)), nil)
		add("progress ttl", call(`96`, `"change_ttl"`, `{"zone":"z","ttl":300}`, prog(`"p"`)), nil)
		add("progress Accept JSON only", call(`98`, `"progress_steps"`, item, prog(`"p"`)), map[string]string{"Accept": "application/json"})
		add("progress Accept stream only", call(`99`, `"progress_steps"`, item, prog(`"p"`)), map[string]string{"Accept": "text/event-stream"})
		add("progress Accept wildcard", call(`150`, `"progress_steps"`, item, prog(`"p"`)), map[string]string{"Accept": "*/*"})
		add("progress Accept with q", call(`151`, `"progress_steps"`, item, prog(`"p"`)), map[string]string{"Accept": "application/json;q=0.5, text/event-stream;q=0"})
		lvl := func(level string) string { return withMeta(m, `"io.modelcontextprotocol/logLevel":`+level) }
		for i, level := range []string{`"debug"`, `"info"`, `"warning"`, `"emergency"`, `"bogus"`, `""`, `null`, `5`, `{"a":1}`, `"\u0069nfo"`} {
			add("log level "+level, call(strconv.Itoa(100+i), `"change_ttl"`, `{"zone":"z","ttl":300}`, lvl(level)), nil)
			add("log level and progress "+level, call(strconv.Itoa(120+i), `"change_ttl"`, `{"zone":"z","ttl":300}`, withMeta(lvl(level), `"progressToken":"p"`)), nil)
		}
		add("log level tool without log", call(`140`, `"progress_steps"`, item, lvl(`"debug"`)), nil)
		add("log level tool error", call(`141`, `"change_ttl"`, `{"zone":"z","ttl":5}`, lvl(`"debug"`)), nil)
		add("progress unauthenticated", call(`97`, `"progress_steps"`, item, prog(`"p"`)), map[string]string{"Authorization": ""})
		disc := func(id, params string) string {
			return `{"jsonrpc":"2.0","id":` + id + `,"method":"server/discover"` + params + `}`
		}
		add("server/discover", disc(`70`, `,"params":{"_meta":`+orEmpty(m)+`}`), nil)
		add("server/discover string id", disc(`"d-1"`, `,"params":{"_meta":`+orEmpty(m)+`}`), nil)
		add("server/discover no params", disc(`71`, ``), nil)
		add("server/discover null params", disc(`72`, `,"params":null`), nil)
		add("server/discover params array", disc(`73`, `,"params":[1]`), nil)
		add("server/discover params string", disc(`74`, `,"params":"x"`), nil)
		add("server/discover _meta array", disc(`75`, `,"params":{"_meta":[1]}`), nil)
		add("server/discover extra member", disc(`76`, `,"params":{"cursor":"c","_meta":`+orEmpty(m)+`}`), nil)
		add("server/discover progress token", disc(`77`, `,"params":{"_meta":`+strings.Replace(orEmpty(m), `{`, `{"progressToken":"p",`, 1)+`}`), nil)
		add("server/discover null id", disc(`null`, `,"params":{"_meta":`+orEmpty(m)+`}`), nil)
		add("server/discover Mcp-Method mismatch", disc(`78`, `,"params":{"_meta":`+orEmpty(m)+`}`), map[string]string{"Mcp-Method": "tools/list"})
		add("server/discover Last-Event-ID", disc(`79`, `,"params":{"_meta":`+orEmpty(m)+`}`), map[string]string{"Last-Event-ID": "x"})
		add("server/discover unauthenticated", disc(`80`, `,"params":{"_meta":`+orEmpty(m)+`}`), map[string]string{"Authorization": ""})
	}
	item2 := `{"zone":"example.com","name":"www"}`
	qs = append(qs,
		fastRequest{name: "no version header", body: call(`50`, `"get_item"`, item2, "")},
		fastRequest{name: "legacy with _meta version", body: call(`51`, `"get_item"`, item2, modernMeta), version: "2025-11-25"},
		fastRequest{name: "modern without _meta", body: call(`52`, `"get_item"`, item2, ""), version: "2026-07-28", mirror: true},
		fastRequest{name: "modern without clientCapabilities", body: call(`58`, `"delete_item"`, item2, `{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`), version: "2026-07-28", mirror: true},
		fastRequest{name: "modern null clientCapabilities", body: call(`59`, `"delete_item"`, item2, `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":null}`), version: "2026-07-28", mirror: true},
		fastRequest{name: "modern clientCapabilities wrong inner type", body: call(`60`, `"delete_item"`, item2, `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"roots":5}}`), version: "2026-07-28", mirror: true},
		fastRequest{name: "modern clientInfo wrong type", body: call(`61`, `"delete_item"`, item2, `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":"c"}`), version: "2026-07-28", mirror: true},
		fastRequest{name: "modern clientInfo null", body: call(`62`, `"delete_item"`, item2, `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":null}`), version: "2026-07-28", mirror: true},
		fastRequest{name: "modern capabilities only", body: call(`63`, `"get_item"`, item2, `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"ROOTS":5}}`), version: "2026-07-28", mirror: true},
		fastRequest{name: "unknown later version", body: call(`53`, `"get_item"`, item2, ""), version: "2099-01-01", mirror: true},
		fastRequest{name: "unknown old version", body: call(`54`, `"get_item"`, item2, ""), version: "2001-01-01"},
		fastRequest{name: "2024-11-05", body: call(`55`, `"get_item"`, item2, ""), version: "2024-11-05"},
		fastRequest{name: "2025-03-26", body: call(`56`, `"get_item"`, item2, ""), version: "2025-03-26"},
		fastRequest{name: "2025-06-18", body: call(`57`, `"get_item"`, item2, ""), version: "2025-06-18"},
		fastRequest{name: "discover unknown later version", body: discover(`81`, strings.ReplaceAll(modernMeta, "2026-07-28", "2099-01-01")), version: "2099-01-01", mirror: true},
		fastRequest{name: "discover unknown old version", body: discover(`82`, ""), version: "2001-01-01", mirror: true},
		fastRequest{name: "discover no version header", body: discover(`83`, ""), mirror: true},
		fastRequest{name: "discover legacy with _meta version", body: discover(`84`, modernMeta), version: "2025-11-25", mirror: true},
		fastRequest{name: "discover modern _meta version disagrees", body: discover(`85`, strings.Replace(modernMeta, "2026-07-28", "2025-11-25", 1)), version: "2026-07-28", mirror: true},
		fastRequest{name: "discover modern without clientCapabilities", body: discover(`86`, `{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`), version: "2026-07-28", mirror: true},
		fastRequest{name: "discover modern clientInfo wrong type", body: discover(`87`, `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":"c"}`), version: "2026-07-28", mirror: true},
		fastRequest{name: "discover modern other capabilities", body: discover(`88`, `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{},"sampling":{}},"io.modelcontextprotocol/clientInfo":{"name":"other","version":"9"}}`), version: "2026-07-28", mirror: true},
		fastRequest{name: "discover modern log level", body: discover(`89`, strings.Replace(modernMeta, `{`, `{"io.modelcontextprotocol/logLevel":"debug",`, 1)), version: "2026-07-28", mirror: true},
	)
	return qs
}

// discover is a server/discover request with _meta meta ("" for none).
func discover(id, meta string) string {
	if meta == "" {
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"server/discover","params":{}}`
	}
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"server/discover","params":{"_meta":` + meta + `}}`
}

// withMeta adds the member member to the _meta object meta ("" for none).
func withMeta(meta, member string) string {
	if meta == "" || meta == "{}" {
		return "{" + member + "}"
	}
	return "{" + member + "," + meta[1:]
}

func orEmpty(s string) string {
	if s == "" {
		return "{}"
	}
	return s
}

// TestFastPathEquivalence sends every request of the table through both
// paths, in order, on one pair of servers (so confirmation tokens and rate
// windows evolve alike), and requires the same status, headers and body.
func TestFastPathEquivalence(t *testing.T) {
	p := newFastPair(t, 1000)
	answered := 0
	for _, q := range fastTable() {
		ex := p.compare(t, q)
		if ex.Status == 200 {
			answered++
		}
	}
	if answered < 40 {
		t.Fatalf("only %d requests answered 200: the table no longer exercises the fast path", answered)
	}
}

// TestFastPathAnswers proves the fast path is the one answering (so the
// equivalence tests compare two different paths): its counter of answers
// grows by one per request, and the go-sdk path's server's stays at zero.
func TestFastPathAnswers(t *testing.T) {
	p := newFastPair(t, 1000)
	for _, q := range []fastRequest{
		{name: "legacy", body: call(`1`, `"get_item"`, `{"zone":"z","name":"n"}`, ""), version: "2025-11-25"},
		{name: "modern", body: call(`1`, `"get_item"`, `{"zone":"z","name":"n"}`, modernMeta), version: "2026-07-28", mirror: true},
		{name: "server/discover", body: discover(`1`, modernMeta), version: "2026-07-28", mirror: true},
		{name: "legacy progress stream", body: call(`1`, `"change_ttl"`, `{"zone":"z","ttl":300}`, `{"progressToken":"p"}`), version: "2025-11-25"},
		{name: "log level stream", body: call(`1`, `"change_ttl"`, `{"zone":"z","ttl":300}`, strings.Replace(modernMeta, `{`, `{"io.modelcontextprotocol/logLevel":"info",`, 1)), version: "2026-07-28", mirror: true},
		{name: "progress stream", body: call(`1`, `"progress_steps"`, `{"zone":"z","name":"n"}`, strings.Replace(modernMeta, `{`, `{"progressToken":"p",`, 1)), version: "2026-07-28", mirror: true},
	} {
		before := kernel.FastAnswered(p.fastSrv)
		p.compare(t, q)
		if got := kernel.FastAnswered(p.fastSrv) - before; got != 1 {
			t.Errorf("%s: the fast path answered %d requests, want 1", q.name, got)
		}
	}
	// and a request it leaves to the go-sdk is not counted
	before := kernel.FastAnswered(p.fastSrv)
	p.compare(t, fastRequest{name: "unknown tool", body: call(`1`, `"no_such_tool"`, `{}`, ""), version: "2025-11-25"})
	if got := kernel.FastAnswered(p.fastSrv) - before; got != 0 {
		t.Errorf("unknown tool: the fast path answered %d requests, want 0", got)
	}
	if n := kernel.FastAnswered(p.sdkSrv); n != 0 {
		t.Errorf("DisableFastPath: the fast path answered %d requests", n)
	}
}

// TestFastPathRateLimit: the refusal (429, Retry-After) is the HTTP
// admission's on both paths.
func TestFastPathRateLimit(t *testing.T) {
	p := newFastPair(t, 2)
	for i, v := range []string{"2025-11-25", "2026-07-28", "2025-11-25"} {
		meta := ""
		if v == "2026-07-28" {
			meta = modernMeta
		}
		ex := p.compare(t, fastRequest{name: v, body: call(`1`, `"get_item"`, `{"zone":"z","name":"n"}`, meta), version: v, mirror: true})
		if want := map[bool]int{true: 429, false: 200}[i == 2]; ex.Status != want {
			t.Fatalf("request %d: status %d, want %d", i, ex.Status, want)
		}
	}
}

// TestFastPathProgressRateLimit: a progress-reporting call refused by the
// rate limit is the HTTP admission's 429 on both paths, not a stream.
func TestFastPathProgressRateLimit(t *testing.T) {
	p := newFastPair(t, 1)
	meta := strings.Replace(modernMeta, `{`, `{"progressToken":"p",`, 1)
	for i := range 2 {
		ex := p.compare(t, fastRequest{name: "progress", body: call(`1`, `"progress_steps"`, `{"zone":"z","name":"n"}`, meta), version: "2026-07-28", mirror: true})
		want, ct := 200, "text/event-stream"
		if i == 1 {
			want, ct = 429, "application/json"
		}
		if ex.Status != want || ex.Header["Content-Type"][0] != ct {
			t.Fatalf("request %d: status %d %v, want %d %s", i, ex.Status, ex.Header["Content-Type"], want, ct)
		}
		if i == 0 && strings.Count(ex.Body, "notifications/progress") != 4 {
			t.Fatalf("want 4 progress events: %s", ex.Body)
		}
	}
}

// TestFastPathLogLevel: a 2026-07-28 call with a log level gets the log
// notifications at or above it on its event stream, and none below it.
func TestFastPathLogLevel(t *testing.T) {
	p := newFastPair(t, 1000)
	for level, want := range map[string]int{"debug": 1, "info": 1, "warning": 0, "bogus": 1} {
		meta := strings.Replace(modernMeta, `{`, `{"io.modelcontextprotocol/logLevel":"`+level+`",`, 1)
		ex := p.compare(t, fastRequest{name: level, body: call(`1`, `"change_ttl"`, `{"zone":"z","ttl":300}`, meta), version: "2026-07-28", mirror: true})
		if got := strings.Count(ex.Body, `"notifications/message"`); ex.Status != 200 || got != want || !strings.Contains(ex.Body, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\"") {
			t.Errorf("level %s: status %d, %d log notifications (want %d): %s", level, ex.Status, got, want, ex.Body)
		}
	}
}

// TestFastPathTranscripts replays every golden transcript's requests over
// HTTP through both paths.
func TestFastPathTranscripts(t *testing.T) {
	files, _ := filepath.Glob("testdata/transcripts/*.txtar")
	if len(files) == 0 {
		t.Fatal("no transcripts")
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			p := newFastPair(t, 1000)
			for i, body := range transcriptRequests(t, file) {
				p.compare(t, fastRequest{name: file + " #" + string(rune('0'+i)), body: body, version: "2026-07-28", mirror: true})
			}
		})
	}
}

// transcriptRequests returns the client's messages of a transcript, compact.
func transcriptRequests(t *testing.T, file string) []string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, part := range strings.Split(string(data), "\nclient:\n")[1:] {
		msg, _, _ := strings.Cut(part, "\nserver:\n")
		var v json.RawMessage
		if json.Unmarshal([]byte(msg), &v) != nil {
			t.Fatalf("%s: a client message is not JSON", file)
		}
		b, _ := json.Marshal(v)
		out = append(out, string(b))
	}
	if len(out) == 0 {
		t.Fatalf("%s: no client messages", file)
	}
	return out
}

// FuzzFastPathEquivalence: any body, under any protocol version, gets the
// same answer from both paths.
func FuzzFastPathEquivalence(f *testing.F) {
	for _, q := range fastTable() {
		f.Add(q.body, q.version)
	}
	p := newFastPair(f, 1<<30)
	f.Fuzz(func(t *testing.T, body, version string) {
		p.compare(t, fastRequest{name: "fuzz", body: body, version: version, mirror: true})
	})
}

// TestFastPathBudget: a 2 MiB _meta (the body limit is 3 MiB) costs the
// fast path no more than the go-sdk path, which decodes it several times,
// and both answer it alike.
func TestFastPathBudget(t *testing.T) {
	p := newFastPair(t, 1000)
	big := `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"experimental":{"x":"` +
		strings.Repeat("a", 2<<20) + `"}}}`
	q := fastRequest{name: "2 MiB _meta", body: call(`1`, `"get_item"`, `{"zone":"z","name":"n"}`, big), version: "2026-07-28", mirror: true}
	if ex := p.compare(t, q); ex.Status != 200 {
		t.Fatalf("status %d", ex.Status)
	}
	bytesPerRun := func(h http.Handler) uint64 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range 3 {
			h.ServeHTTP(httptest.NewRecorder(), q.build())
		}
		runtime.ReadMemStats(&after)
		return (after.TotalAlloc - before.TotalAlloc) / 3
	}
	fast, sdk := bytesPerRun(p.fast), bytesPerRun(p.sdk)
	if fast > sdk {
		t.Fatalf("fast path allocates %d bytes for a 2 MiB _meta, the go-sdk path %d", fast, sdk)
	}
	t.Logf("bytes allocated per request: fast %d, go-sdk %d", fast, sdk)
}

// TestFastPathDiscover: a 2026-07-28 server/discover is answered (not an
// error both paths happen to share) with the server's versions,
// capabilities, instructions and identity.
func TestFastPathDiscover(t *testing.T) {
	p := newFastPair(t, 1000)
	ex := p.compare(t, fastRequest{name: "discover", body: discover(`"x"`, modernMeta), version: "2026-07-28", mirror: true})
	if ex.Status != 200 {
		t.Fatalf("status %d: %s", ex.Status, ex.Body)
	}
	for _, want := range []string{`"id":"x"`, `"supportedVersions":[`, `"2026-07-28"`, `"capabilities":{`, `"instructions":"Use <get_item> & \u2028 friends."`, `"io.modelcontextprotocol/serverInfo":{"name":"test","version":"v0"}`} {
		if !strings.Contains(ex.Body, want) {
			t.Errorf("answer lacks %s: %s", want, ex.Body)
		}
	}
}
