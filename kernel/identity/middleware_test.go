package identity

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/bulwarkmcp/bulwark/kernel/internal/reqscope"
)

// echo records what the next handler saw.
type echo struct {
	principal Principal
	ok        bool
	header    http.Header
}

func (e *echo) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	e.principal, e.ok = FromContext(r.Context())
	e.header = r.Header
	w.WriteHeader(http.StatusNoContent)
}

func TestMiddlewareSuccessStripsCredentials(t *testing.T) {
	keys, _ := ParseAPIKeys(strings.NewReader(testKeyFile()))
	next := &echo{}
	h := Middleware(keys, nil)(next)
	r := httptest.NewRequest("POST", "/mcp", nil)
	r.Header.Set("Authorization", "Bearer "+aliceKey)
	r.Header.Set("X-API-Key", aliceKey)
	r.Header.Set("DD-API-KEY", "byok")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != http.StatusNoContent || !next.ok || next.principal.ID != "alice" {
		t.Fatalf("code %d, principal %+v %v", w.Code, next.principal, next.ok)
	}
	if next.header.Get("Authorization") != "" || next.header.Get("X-API-Key") != "" {
		t.Fatalf("credential headers forwarded: %v", next.header)
	}
	if next.header.Get("DD-API-KEY") != "byok" {
		t.Fatal("unrelated header removed")
	}
	if r.Header.Get("Authorization") == "" {
		t.Fatal("caller's request header map was mutated")
	}
}

func TestMiddlewareNoneStripsToo(t *testing.T) {
	next := &echo{}
	r := httptest.NewRequest("POST", "/mcp", nil)
	r.RemoteAddr = "127.0.0.1:5555"
	r.Header.Set("Authorization", "Bearer x")
	Middleware(NewNone(nil), nil)(next).ServeHTTP(httptest.NewRecorder(), r)
	if !reflect.DeepEqual(next.principal, Local("")) || next.principal.Plan != planLocal {
		t.Fatalf("principal %+v", next.principal)
	}
	if next.header.Get("Authorization") != "" {
		t.Fatal("Authorization passed on under None")
	}
}

func TestMiddlewareRefusal(t *testing.T) {
	a := newTestOAuth(t, nil)
	expired := signJWT(t, "RS256", "rsa-1", tk(t).rsa, claims(map[string]any{"exp": testNow.Add(-time.Hour).Unix()}), nil)
	noScope := signJWT(t, "RS256", "rsa-1", tk(t).rsa, claims(map[string]any{"scope": "x"}), nil)
	tests := []struct {
		name, token, query string
		status             int
		code               string
	}{
		{"no token", "", "", 401, "unauthorized"},
		{"expired", expired, "", 401, "invalid_token"},
		{"scope", noScope, "", 403, "insufficient_scope"},
		{"query", "", "access_token=" + expired, 400, "invalid_request"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs bytes.Buffer
			logger := slog.New(slog.NewJSONHandler(&logs, nil))
			next := &echo{}
			r := reqWithToken(tt.token)
			r.URL.RawQuery = tt.query
			w := httptest.NewRecorder()
			Middleware(a, logger)(next).ServeHTTP(w, r)
			if next.ok || w.Code != tt.status {
				t.Fatalf("code %d, next called %v", w.Code, next.ok)
			}
			if w.Header().Get("WWW-Authenticate") == "" || w.Header().Get("Cache-Control") != "no-store" ||
				w.Header().Get("Content-Type") != "application/json" {
				t.Fatalf("headers %v", w.Header())
			}
			var body refusalBody
			if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil || body.Error != tt.code || len(body.ID) != 16 {
				t.Fatalf("body %s", w.Body)
			}
			for _, leak := range []string{"token expired", "not granted", "aud ", "iss ", "kid", "rsa"} {
				if strings.Contains(w.Body.String(), leak) {
					t.Fatalf("body leaks %q: %s", leak, w.Body)
				}
			}
			var rec map[string]any
			if err := json.Unmarshal(logs.Bytes(), &rec); err != nil || rec["id"] != body.ID || rec["status"] != float64(tt.status) {
				t.Fatalf("log %s does not carry id %s", logs.String(), body.ID)
			}
			if tt.token != "" && strings.Contains(logs.String(), tt.token[len(tt.token)-16:]) {
				t.Fatal("log contains the token")
			}
		})
	}
}

type failing struct{}

func (failing) Authenticate(*http.Request) (Principal, error) {
	return Principal{}, errors.New("database password=hunter2 unreachable")
}

func TestMiddlewareInternalError(t *testing.T) {
	w := httptest.NewRecorder()
	Middleware(failing{}, nil)(&echo{}).ServeHTTP(w, httptest.NewRequest("POST", "/mcp", nil))
	if w.Code != 500 || strings.Contains(w.Body.String(), "hunter2") || !strings.Contains(w.Body.String(), "server_error") {
		t.Fatalf("code %d body %s", w.Code, w.Body)
	}
}

func TestNone(t *testing.T) {
	tests := []struct {
		remote string
		opts   *NoneOptions
		want   Principal
		status int
	}{
		{"127.0.0.1:4000", nil, Principal{ID: "local", Plan: "local", Scheme: "none"}, 0},
		{"[::1]:4000", nil, Principal{ID: "local", Plan: "local", Scheme: "none"}, 0},
		{"[::ffff:127.0.0.1]:4000", nil, Principal{ID: "local", Plan: "local", Scheme: "none"}, 0},
		{"127.0.0.1:4000", &NoneOptions{Plan: "pro"}, Principal{ID: "local", Plan: "pro", Scheme: "none"}, 0},
		{"192.0.2.7:4000", nil, Principal{}, 403},
		{"garbage", nil, Principal{}, 403},
		{"192.0.2.7:4000", &NoneOptions{InsecureAllowRemote: true}, Principal{ID: "local", Plan: "local", Scheme: "none"}, 0},
	}
	for _, tt := range tests {
		r := httptest.NewRequest("POST", "/mcp", nil)
		r.RemoteAddr = tt.remote
		p, err := NewNone(tt.opts).Authenticate(r)
		var ae *authError
		switch {
		case tt.status == 0 && (err != nil || !reflect.DeepEqual(p, tt.want)):
			t.Errorf("%s %+v: got %+v, %v", tt.remote, tt.opts, p, err)
		case tt.status != 0 && (!errors.As(err, &ae) || ae.Status != tt.status || !errors.Is(err, errNotLoopback)):
			t.Errorf("%s: got %v, want %d", tt.remote, err, tt.status)
		}
	}
}

func TestPrincipalContext(t *testing.T) {
	ctx := t.Context()
	if _, ok := FromContext(ctx); ok {
		t.Fatal("empty context has a principal")
	}
	p := Principal{ID: "a", Plan: "pro", Scheme: SchemeAPIKey}
	if got, ok := FromContext(withPrincipal(ctx, p)); !ok || !reflect.DeepEqual(got, p) {
		t.Fatalf("got %+v %v", got, ok)
	}
}

func TestChallengeString(t *testing.T) {
	tests := []struct {
		c    bearerChallenge
		want string
	}{
		{bearerChallenge{}, "Bearer"},
		{bearerChallenge{Error: "invalid_token"}, `Bearer error="invalid_token"`},
		{bearerChallenge{ResourceMetadata: "https://x/.well-known/oauth-protected-resource", Scope: []string{"a", "b"}, Error: "insufficient_scope"},
			`Bearer resource_metadata="https://x/.well-known/oauth-protected-resource", scope="a b", error="insufficient_scope"`},
		{bearerChallenge{ResourceMetadata: "https://x/\"\\\r\nSet-Cookie: a=b\x00é"}, `Bearer resource_metadata="https://x/\"\\Set-Cookie: a=b"`},
	}
	for _, tt := range tests {
		if got := tt.c.String(); got != tt.want {
			t.Errorf("got  %s\nwant %s", got, tt.want)
		}
	}
}

// TestMiddlewareStripsEveryCasing: credential headers never reach the next
// handler, whatever the casing of their keys (a key put into the map
// directly is not canonicalized, and Header.Del misses it), and the
// caller's request keeps its own headers.
func TestMiddlewareStripsEveryCasing(t *testing.T) {
	for _, keys := range [][]string{
		{"Authorization"}, {"X-Api-Key"}, {"authorization"}, {"AUTHORIZATION"},
		{"x-api-key"}, {"X-API-KEY"}, {"X-API-Key"}, {"aUtHoRiZaTiOn", "x-Api-kEy"},
		{"Authorization", "authorization", "X-Api-Key", "X-API-KEY"},
	} {
		t.Run(strings.Join(keys, "+"), func(t *testing.T) {
			next := &echo{}
			r := httptest.NewRequest("POST", "/mcp", nil)
			r.RemoteAddr = "127.0.0.1:5555"
			for _, k := range keys {
				r.Header[k] = []string{"Bearer secret-" + k}
			}
			r.Header.Set("Dd-Api-Key", "byok")
			Middleware(NewNone(nil), nil)(next).ServeHTTP(httptest.NewRecorder(), r)
			if !next.ok {
				t.Fatal("next handler not reached")
			}
			for k, v := range next.header {
				if strings.EqualFold(k, "Authorization") || strings.EqualFold(k, "X-Api-Key") || strings.Contains(strings.Join(v, ""), "secret-") {
					t.Fatalf("credential header %q reached the handler: %v", k, next.header)
				}
			}
			if next.header.Get("Dd-Api-Key") != "byok" {
				t.Fatal("unrelated header removed")
			}
			for _, k := range keys {
				if len(r.Header[k]) != 1 {
					t.Fatalf("caller's request lost %q: %v", k, r.Header)
				}
			}
		})
	}
}

// TestMiddlewareKeepsHeaderMapWithoutCredentials: with no credential header
// to remove, the next handler gets the request's own header map, not a copy.
func TestMiddlewareKeepsHeaderMapWithoutCredentials(t *testing.T) {
	next := &echo{}
	r := httptest.NewRequest("POST", "/mcp", nil)
	r.RemoteAddr = "127.0.0.1:5555"
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Dd-Api-Key", "byok") // a provider credential, not the client's own
	Middleware(NewNone(nil), nil)(next).ServeHTTP(httptest.NewRecorder(), r)
	if reflect.ValueOf(next.header).UnsafePointer() != reflect.ValueOf(r.Header).UnsafePointer() {
		t.Fatal("the header map was copied with nothing to remove")
	}
}

func BenchmarkMiddlewareNoCredentials(b *testing.B) {
	h := Middleware(NewNone(nil), nil)(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	r := httptest.NewRequest("POST", "/mcp", nil)
	r.RemoteAddr = "127.0.0.1:5555"
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	w := httptest.NewRecorder()
	b.ReportAllocs()
	for b.Loop() {
		h.ServeHTTP(w, r)
	}
}

// TestMiddlewareRecordsInTheScope: behind the guards (whose request carries
// the kernel's reqscope.Scope) the principal is recorded in that scope and
// the next handler gets the same request, not a copy; with a credential
// header to remove it gets a copy, and the caller's request keeps its
// headers.
func TestMiddlewareRecordsInTheScope(t *testing.T) {
	var got *http.Request
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got = r })
	h := Middleware(NewNone(nil), nil)(next)
	r, _ := reqscope.Ensure(httptest.NewRequest("POST", "/mcp", nil))
	r.RemoteAddr = "127.0.0.1:5555"
	h.ServeHTTP(httptest.NewRecorder(), r)
	if p, ok := FromContext(got.Context()); got != r || !ok || !reflect.DeepEqual(p, Local("")) {
		t.Fatalf("same request %v, principal %+v %v", got == r, p, ok)
	}
	r.Header.Set("X-API-Key", "k")
	h.ServeHTTP(httptest.NewRecorder(), r)
	if got == r || got.Header.Get("X-API-Key") != "" || r.Header.Get("X-API-Key") != "k" {
		t.Fatalf("credential header: copied %v, passed on %q, caller's %q", got != r, got.Header.Get("X-API-Key"), r.Header.Get("X-API-Key"))
	}
	if p, ok := FromContext(got.Context()); !ok || p.ID != "local" {
		t.Fatalf("principal %+v %v", p, ok)
	}
}
