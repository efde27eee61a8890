package httpguard

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

const app = "https://app.example.com"

// authStub refuses requests without Authorization and records the trace
// headers it saw, so tests can tell what reached authentication.
type authStub struct{ sawTrace []string }

func (a *authStub) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.sawTrace = append(a.sawTrace, r.Header.Get("Traceparent"))
		if r.Header.Get("Authorization") == "" {
			w.Header().Set("WWW-Authenticate", `Bearer realm="test"`)
			WriteError(w, http.StatusUnauthorized, nil, codeInvalidRequest, "unauthorized", errorData{Error: "unauthorized"})
			return
		}
		next.ServeHTTP(w, r)
	})
}

// messageEcho answers with the message's method and name, proving the
// pipeline parsed the body for later stages and the body is still readable.
var messageEcho = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	env, ok := messageFromContext(r.Context())
	if !ok {
		http.Error(w, "no message", http.StatusTeapot)
		return
	}
	okHandler.ServeHTTP(httptest.NewRecorder(), r) // the body can still be read in full
	w.Write([]byte(env.Method + " " + env.Name))
})

func newTestPipeline(t testing.TB, auth *authStub, flood int) *httptest.Server {
	t.Helper()
	p, err := NewPipeline(&PipelineOptions{
		Flood:        &FloodOptions{Limit: flood},
		Hosts:        []string{"mcp.example.com", "127.0.0.1"},
		CORS:         &CORSOptions{Origins: []string{app}},
		MaxBodyBytes: 256,
		Auth:         auth.wrap,
	})
	if err != nil {
		t.Fatal(err)
	}
	return serve(t, p.Handler(messageEcho))
}

func TestPipelineOrder(t *testing.T) {
	auth := &authStub{}
	srv := newTestPipeline(t, auth, 1000)
	big := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"pad":"` + strings.Repeat("x", 400) + `"}}}`
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_zones"}}`
	std := func(kv ...string) map[string]string {
		m := map[string]string{"Content-Type": "application/json", "Accept": acceptBoth, "Authorization": "Bearer t"}
		for i := 0; i < len(kv); i += 2 {
			if kv[i+1] == "" {
				delete(m, kv[i])
				continue
			}
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	tests := []struct {
		name   string
		req    wireReq
		status int
		reason string
	}{
		{"oversize body from a blocked origin: 403, not 413", wireReq{headers: std("Origin", "https://evil.example.com"), body: big}, 403, reasonCORSForbidden},
		{"oversize body, rebinding Host: 403 host", wireReq{host: "evil.example.com", headers: std("Origin", "https://evil.example.com"), body: big}, 403, reasonHostForbidden},
		{"GET from a blocked origin: 403, not 405", wireReq{method: "GET", headers: std("Origin", "https://evil.example.com")}, 403, reasonCORSForbidden},
		{"preflight before the method guard", wireReq{method: "OPTIONS", headers: map[string]string{"Origin": app, "Access-Control-Request-Method": "POST"}}, 204, ""},
		{"GET: 405", wireReq{method: "GET", headers: std()}, 405, reasonMethodNotAllowed},
		{"wrong type and oversize: 415, not 413", wireReq{headers: std("Content-Type", "text/plain"), body: big}, 415, reasonUnsupportedMediaType},
		{"oversize from an allowed origin: 413", wireReq{headers: std("Origin", app), body: big}, 413, reasonBodyTooLarge},
		{"chunked oversize: 413", wireReq{headers: std(), body: big, chunked: true}, 413, reasonBodyTooLarge},
		{"oversize without auth: 413 before auth", wireReq{headers: std("Authorization", ""), body: big}, 413, reasonBodyTooLarge},
		{"mismatch without auth: auth first", wireReq{headers: std("Authorization", "", "Mcp-Protocol-Version", "2026-07-28", "Mcp-Method", "x"), body: call}, 401, "unauthorized"},
		{"mismatch with auth: 400 -32020", wireReq{headers: std("Mcp-Protocol-Version", "2026-07-28", "Mcp-Method", "x"), body: call}, 400, reasonHeaderMismatch},
		{"not JSON: 400", wireReq{headers: std(), body: "{"}, 400, reasonParseError},
		{"legacy call served", wireReq{headers: std("Mcp-Protocol-Version", "2025-11-25"), body: call}, 200, ""},
		{"modern call served", wireReq{headers: std("Mcp-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/call", "Mcp-Name", "list_zones"), body: call}, 200, ""},
		{"allowed origin served", wireReq{headers: std("Origin", app), body: call}, 200, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := send(t, srv, tt.req)
			switch {
			case tt.status == 200:
				if got.status != 200 || got.body != "tools/call list_zones" {
					t.Fatalf("status %d body %q", got.status, got.body)
				}
			case tt.status == 204:
				if got.status != 204 || got.header.Get("Access-Control-Allow-Origin") != app {
					t.Fatalf("status %d headers %v", got.status, got.header)
				}
			case tt.reason == "unauthorized":
				if got.status != 401 || got.header.Get("WWW-Authenticate") == "" {
					t.Fatalf("status %d body %q", got.status, got.body)
				}
			case tt.reason == reasonHeaderMismatch:
				wantRefusal(t, got, 400, codeHeaderMismatch, reasonHeaderMismatch)
			case tt.reason == reasonParseError:
				wantRefusal(t, got, 400, codeParseError, reasonParseError)
			default:
				wantRefusal(t, got, tt.status, codeInvalidRequest, tt.reason)
			}
			if got.header.Get("Vary") != "Origin" && tt.reason != reasonHostForbidden {
				t.Errorf("Vary = %q, want Origin", got.header.Get("Vary"))
			}
		})
	}
}

func TestPipelineFloodComesFirst(t *testing.T) {
	srv := newTestPipeline(t, &authStub{}, 2)
	for i := 0; i < 2; i++ {
		send(t, srv, wireReq{host: "evil.example.com"}) // refused by Host, but counted
	}
	got := send(t, srv, wireReq{host: "evil.example.com"})
	wantRefusal(t, got, 429, codeRateLimited, reasonRateLimited)
	if got.header.Get("Retry-After") == "" {
		t.Fatal("no Retry-After")
	}
}

func TestPipelineDropsInvalidTraceBeforeAuth(t *testing.T) {
	auth := &authStub{}
	srv := newTestPipeline(t, auth, 1000)
	for _, tp := range []string{validTP, "00-zz"} {
		send(t, srv, wireReq{headers: map[string]string{"Content-Type": "application/json", "Accept": acceptBoth, "Traceparent": tp}, body: "{}"})
	}
	if len(auth.sawTrace) != 2 || auth.sawTrace[0] != validTP || auth.sawTrace[1] != "" {
		t.Fatalf("auth saw traceparents %q", auth.sawTrace)
	}
}

func TestNewPipelineValidates(t *testing.T) {
	bad := []*PipelineOptions{
		{CORS: &CORSOptions{Origins: []string{"*"}, AllowCredentials: true}},
		{Hosts: []string{"bad host"}},
		{Flood: &FloodOptions{Limit: -1}},
	}
	for i, o := range bad {
		if _, err := NewPipeline(o); !errors.Is(err, errInvalidConfig) {
			t.Errorf("case %d: NewPipeline = %v", i, err)
		}
	}
	p, err := NewPipeline(&PipelineOptions{DisableFlood: true})
	if err != nil || p.flood != nil {
		t.Fatalf("DisableFlood: %v %v", p, err)
	}
}

func TestPipelineLegacySDK(t *testing.T) {
	p, _ := NewPipeline(nil)
	srv := serve(t, p.Handler(sdkHandler(t)))
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"legacy"}}}`
	got := send(t, srv, wireReq{headers: map[string]string{
		"Content-Type": "application/json", "Accept": acceptBoth, "Mcp-Protocol-Version": "2025-11-25",
		"Mcp-Method": "tools/list", "Mcp-Name": "nonsense", // never trusted at this version
	}, body: body})
	if got.status != 200 || !strings.Contains(got.body, `"text":"legacy"`) {
		t.Fatalf("status %d body %s", got.status, got.body)
	}
}

// BenchmarkPipeline compares, in one run, a request served bare and through
// the full guard chain, with a trivial next handler and with the go-sdk.
func BenchmarkPipeline(b *testing.B) {
	p, err := NewPipeline(&PipelineOptions{Flood: &FloodOptions{Limit: 1 << 30, Window: time.Hour}, CORS: &CORSOptions{Origins: []string{app}}})
	if err != nil {
		b.Fatal(err)
	}
	drain := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var buf [512]byte
		for {
			if _, err := r.Body.Read(buf[:]); err != nil {
				break
			}
		}
		w.WriteHeader(200)
	})
	sdk := sdkHandler(b)
	cases := []struct {
		name string
		h    http.Handler
	}{
		{"drain/bare", drain},
		{"drain/pipeline", p.Handler(drain)},
		{"sdk/bare", sdk},
		{"sdk/pipeline", p.Handler(sdk)},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				r := httptest.NewRequest("POST", "http://localhost/mcp", strings.NewReader(modernEchoCall))
				r.Header.Set("Content-Type", "application/json")
				r.Header.Set("Accept", acceptBoth)
				r.Header.Set("Origin", app)
				r.Header.Set("Traceparent", validTP)
				r.Header.Set("Mcp-Protocol-Version", "2026-07-28")
				r.Header.Set("Mcp-Method", "tools/call")
				r.Header.Set("Mcp-Name", "echo")
				w := httptest.NewRecorder()
				c.h.ServeHTTP(w, r)
				if w.Code != 200 {
					b.Fatalf("status %d: %s", w.Code, w.Body)
				}
			}
		})
	}
}

func BenchmarkParseMessage(b *testing.B) {
	small := []byte(modernEchoCall)
	large := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{"blob":"` + strings.Repeat("a", 1<<20) + `"},"name":"echo"}}`)
	for _, c := range []struct {
		name string
		data []byte
	}{{"small", small}, {"1MiB", large}} {
		b.Run(c.name+"/ParseMessage", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(c.data)))
			for b.Loop() {
				if _, err := ParseMessage(c.data); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.name+"/encoding-json-baseline", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(c.data)))
			for b.Loop() {
				var v struct {
					JSONRPC string          `json:"jsonrpc"`
					ID      json.RawMessage `json:"id"`
					Method  string          `json:"method"`
					Params  struct {
						Name string `json:"name"`
						URI  string `json:"uri"`
						Meta struct {
							Version string `json:"io.modelcontextprotocol/protocolVersion"`
						} `json:"_meta"`
					} `json:"params"`
				}
				if err := json.Unmarshal(c.data, &v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
