package httpguard

import (
	"bytes"
	"errors"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestCORSOptionsValidate(t *testing.T) {
	tests := []struct {
		name string
		opts *CORSOptions
		ok   bool
	}{
		{"nil", nil, true},
		{"empty", &CORSOptions{}, true},
		{"list", &CORSOptions{Origins: []string{"https://app.example.com", "http://localhost:3000"}, AllowCredentials: true}, true},
		{"wildcard", &CORSOptions{Origins: []string{"*"}}, true},
		{"wildcard with credentials", &CORSOptions{Origins: []string{"*"}, AllowCredentials: true}, false},
		{"wildcard mixed", &CORSOptions{Origins: []string{"*", "https://a.example"}}, false},
		{"null origin", &CORSOptions{Origins: []string{"null"}}, false},
		{"path", &CORSOptions{Origins: []string{"https://a.example/app"}}, false},
		{"trailing slash", &CORSOptions{Origins: []string{"https://a.example/"}}, false},
		{"query", &CORSOptions{Origins: []string{"https://a.example?x"}}, false},
		{"fragment", &CORSOptions{Origins: []string{"https://a.example#"}}, false},
		{"userinfo", &CORSOptions{Origins: []string{"https://u@a.example"}}, false},
		{"no scheme", &CORSOptions{Origins: []string{"a.example"}}, false},
		{"bad extra header", &CORSOptions{ExtraHeaders: []string{"DD API KEY"}}, false},
		{"extra header", &CORSOptions{ExtraHeaders: []string{"CF-API-TOKEN", "DD-API-KEY"}}, true},
		{"negative max age", &CORSOptions{MaxAge: -time.Second}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.opts.Validate()
			if (err == nil) != tt.ok {
				t.Fatalf("Validate() = %v, want ok=%v", err, tt.ok)
			}
			if err != nil && !errors.Is(err, errInvalidConfig) {
				t.Fatalf("error %v does not wrap ErrInvalidConfig", err)
			}
			if _, nerr := newCORS(tt.opts); (nerr == nil) != tt.ok {
				t.Fatalf("NewCORS disagrees with Validate: %v", nerr)
			}
		})
	}
}

func TestCORSCheck(t *testing.T) {
	list, _ := newCORS(&CORSOptions{Origins: []string{"https://app.example.com", "http://localhost:3000", "HTTPS://Caps.Example.com:443"}})
	wild, _ := newCORS(&CORSOptions{Origins: []string{"*"}})
	var zero corsGuard
	tests := []struct {
		name    string
		c       *corsGuard
		origins []string
		site    string
		allow   bool
	}{
		{"no origin (CLI)", list, nil, "", true},
		{"no origin, same-origin fetch", list, nil, "same-origin", true},
		{"no origin, cross-site fetch", list, nil, "cross-site", false},
		{"no origin, same-site fetch", list, nil, "same-site", false},
		{"listed", list, []string{"https://app.example.com"}, "", true},
		{"listed, case", list, []string{"https://APP.example.com"}, "", true},
		{"listed, default port", list, []string{"https://app.example.com:443"}, "", true},
		{"listed entry normalized", list, []string{"https://caps.example.com"}, "", true},
		{"listed port", list, []string{"http://localhost:3000"}, "", true},
		{"other port", list, []string{"http://localhost:3001"}, "", false},
		{"other scheme", list, []string{"http://app.example.com"}, "", false},
		{"not listed", list, []string{"https://evil.example.com"}, "", false},
		{"suffix trick", list, []string{"https://app.example.com.evil.com"}, "", false},
		{"null", list, []string{"null"}, "", false},
		{"garbage", list, []string{"::::"}, "", false},
		{"repeated", list, []string{"https://app.example.com", "https://evil.example.com"}, "", false},
		{"wildcard: any", wild, []string{"https://evil.example.com"}, "", true},
		{"wildcard: null", wild, []string{"null"}, "", true},
		{"wildcard: cross-site no origin", wild, nil, "cross-site", true},
		{"zero: no origin", &zero, nil, "", true},
		{"zero: any origin refused", &zero, []string{"http://localhost:3000"}, "", false},
		{"nil: any origin refused", nil, []string{"http://localhost:3000"}, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "/", nil)
			for _, o := range tt.origins {
				r.Header.Add("Origin", o)
			}
			if tt.site != "" {
				r.Header.Set("Sec-Fetch-Site", tt.site)
			}
			err := tt.c.Check(r)
			if (err == nil) != tt.allow || err != nil && !errors.Is(err, errOriginForbidden) {
				t.Fatalf("Check = %v, want allow=%v", err, tt.allow)
			}
		})
	}
}

func TestCORSHandler(t *testing.T) {
	list, _ := newCORS(&CORSOptions{Origins: []string{"https://app.example.com"}, AllowCredentials: true, ExtraHeaders: []string{"cf-api-token"}, MaxAge: time.Hour})
	wild, _ := newCORS(&CORSOptions{Origins: []string{"*"}})
	srvList := serve(t, list.Handler(okHandler))
	srvWild := serve(t, wild.Handler(okHandler))
	const app = "https://app.example.com"
	tests := []struct {
		name    string
		wild    bool
		req     wireReq
		status  int
		headers map[string]string // "" means absent
	}{
		{"preflight allowed", false, wireReq{method: "OPTIONS", headers: map[string]string{"Origin": app, "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type, mcp-param-region, mcp-param-bad name"}}, 204,
			map[string]string{"Access-Control-Allow-Origin": app, "Access-Control-Allow-Methods": "POST", "Access-Control-Max-Age": "3600", "Access-Control-Allow-Credentials": "true", "Vary": "Origin"}},
		{"preflight refused", false, wireReq{method: "OPTIONS", headers: map[string]string{"Origin": "https://evil.example.com", "Access-Control-Request-Method": "POST"}}, 403,
			map[string]string{"Access-Control-Allow-Origin": "", "Vary": "Origin"}},
		{"post allowed", false, wireReq{headers: map[string]string{"Origin": app}, body: "{}"}, 200,
			map[string]string{"Access-Control-Allow-Origin": app, "Access-Control-Expose-Headers": "Www-Authenticate, Retry-After, Mcp-Session-Id, Mcp-Protocol-Version", "Vary": "Origin"}},
		{"post refused", false, wireReq{headers: map[string]string{"Origin": "https://evil.example.com"}, body: "{}"}, 403,
			map[string]string{"Access-Control-Allow-Origin": "", "Vary": "Origin"}},
		{"post without origin", false, wireReq{body: "{}"}, 200,
			map[string]string{"Access-Control-Allow-Origin": "", "Vary": "Origin"}},
		{"wildcard preflight", true, wireReq{method: "OPTIONS", headers: map[string]string{"Origin": "https://x.example", "Access-Control-Request-Method": "POST"}}, 204,
			map[string]string{"Access-Control-Allow-Origin": "*", "Access-Control-Allow-Credentials": "", "Access-Control-Max-Age": "600"}},
		{"wildcard post", true, wireReq{headers: map[string]string{"Origin": "https://x.example"}, body: "{}"}, 200,
			map[string]string{"Access-Control-Allow-Origin": "*", "Vary": ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := srvList
			if tt.wild {
				srv = srvWild
			}
			got := send(t, srv, tt.req)
			switch tt.status {
			case 200:
				wantOK(t, got)
			case 403:
				wantRefusal(t, got, 403, codeInvalidRequest, reasonCORSForbidden)
				if got.rpc.ID != nil || got.rpc.Error.Message != "cors_forbidden: origin not allowed" {
					t.Fatalf("body %s", got.body)
				}
			default:
				if got.status != tt.status {
					t.Fatalf("status %d, want %d", got.status, tt.status)
				}
			}
			for k, v := range tt.headers {
				if g := got.header.Get(k); g != v {
					t.Errorf("%s = %q, want %q", k, g, v)
				}
			}
		})
	}
	t.Run("preflight allow-headers", func(t *testing.T) {
		got := send(t, srvList, tests[0].req)
		ah := got.header.Get("Access-Control-Allow-Headers")
		for _, h := range []string{"Content-Type", "Authorization", "Mcp-Protocol-Version", "Mcp-Method", "Mcp-Name", "Traceparent", "Tracestate", "Cf-Api-Token", "Mcp-Param-Region"} {
			if !strings.Contains(ah, h) {
				t.Errorf("Allow-Headers %q lacks %s", ah, h)
			}
		}
		if strings.Contains(strings.ToLower(ah), "bad") {
			t.Errorf("malformed requested header reflected: %q", ah)
		}
	})
}

func TestWarnIfWildcardInProduction(t *testing.T) {
	tests := []struct {
		origins []string
		env     string
		warn    bool
	}{
		{[]string{"*"}, "production", true},
		{[]string{"*"}, " Production ", true},
		{[]string{"*"}, "development", false},
		{[]string{"*"}, "", false},
		{[]string{"https://a.example"}, "production", false},
		{nil, "production", false},
	}
	for _, tt := range tests {
		var buf bytes.Buffer
		logger := slog.New(slog.NewTextHandler(&buf, nil))
		got := (&CORSOptions{Origins: tt.origins}).WarnIfWildcardInProduction(tt.env, logger)
		if got != tt.warn || (buf.Len() > 0) != tt.warn {
			t.Errorf("origins %v env %q: warned=%v log=%q", tt.origins, tt.env, got, buf.String())
		}
	}
}
