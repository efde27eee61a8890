package kernel_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/identity"
	"github.com/bulwarkmcp/bulwark/kernel/mcptest"
)

const byokSecret = "configured-s3cret-value"

// lockedBuffer is a log destination the server's goroutines share.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// byokServer serves one tool, use_credential, over HTTP with BYOK. Like a
// provider client, the tool refuses a token it cannot put in a header with
// a plain Go error, which the kernel reports as internal: the kernel must
// refuse a malformed credential before a handler ever sees it.
func byokServer(t *testing.T) (url string, log *lockedBuffer) {
	t.Helper()
	log = &lockedBuffer{}
	opts := kernel.Options{BYOK: true,
		Logger:      slog.New(slog.NewJSONHandler(log, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Credentials: []kernel.Credential{{Name: "upstream", Provider: "Example", Header: "X-Example-Token", Value: byokSecret}}}
	tool := kernel.NewTool(kernel.Spec[itemArgs, map[string]any]{
		Name: "use_credential", Description: "Uses the caller's credential.", Policy: readPolicy,
		Handle: func(ctx context.Context, c *kernel.Call, in itemArgs) (map[string]any, error) {
			cred, err := kernel.CredentialFrom(ctx, "upstream")
			if err != nil {
				return nil, err
			}
			if strings.ContainsFunc(cred, func(r rune) bool { return r <= ' ' || r > '~' }) {
				return nil, errors.New("provider client: malformed api token")
			}
			return map[string]any{"cred_len": len(cred), "header_seen": c.Header().Get("X-Example-Token") != "",
				"accept_seen": c.Header().Get("Accept") != ""}, nil
		},
	})
	srv, err := kernel.New(kernel.Info{Name: "t", Version: "v0"}, []kernel.Tool{tool}, &opts)
	if err != nil {
		t.Fatal(err)
	}
	endpoint := mcptest.ServeHTTP(t, srv, kernel.HTTPOptions{})
	return endpoint, log
}

// callWith posts a use_credential call with the given headers and returns
// the tool result's structured content and the whole body.
func callWith(t *testing.T, url string, h http.Header) (map[string]any, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(callBody("use_credential", map[string]any{"zone": "z", "name": "n"})))
	req.Header = h
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var rpc struct {
		Result struct {
			IsError           bool           `json:"isError"`
			StructuredContent map[string]any `json:"structuredContent"`
		} `json:"result"`
	}
	if resp.StatusCode != 200 || json.Unmarshal(body, &rpc) != nil {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	return rpc.Result.StructuredContent, string(body)
}

// TestBYOKMalformedCredentialIsUnauthenticated: a caller who sends a
// malformed credential header gets "unauthenticated" naming the header,
// never "internal", and the server logs it at debug, never at error level
// (any caller could otherwise fill the error log). The value is never
// echoed, and a configured value is never a fallback under BYOK.
func TestBYOKMalformedCredentialIsUnauthenticated(t *testing.T) {
	url, log := byokServer(t)
	with := func(vals ...string) http.Header {
		h := http.Header{}
		for _, v := range vals {
			h.Add("X-Example-Token", v)
		}
		return h
	}
	tests := []struct {
		name    string
		header  http.Header
		message string // "" for success
	}{
		{"present", with("per-request-token"), ""},
		{"surrounding blanks trimmed", with("  per-request-token "), ""},
		{"absent: no fallback to the configured value", with(), "Missing Example credentials"},
		{"blank", with("   "), "Missing Example credentials"},
		{"sent twice", with("tok-one", "tok-two"), "Malformed Example credentials"},
		{"two inner spaces", with("three word token"), "Malformed Example credentials"},
		{"double space", with("Token  per-request-t"), "Malformed Example credentials"},
		{"tab", with("tab\there"), "Malformed Example credentials"},
		{"non-ASCII", with("tökén-tökén"), "Malformed Example credentials"},
		{"longer than 8 KiB", with(strings.Repeat("k", 8<<10+1)), "Malformed Example credentials"},
		{"token too short to scrub", with("Bearer short-tok"), "Malformed Example credentials"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc, body := callWith(t, url, tt.header)
			if tt.message == "" {
				if sc["cred_len"] != float64(len("per-request-token")) || sc["header_seen"] != false || sc["accept_seen"] != true {
					t.Fatalf("accepted call: %s", body)
				}
				return
			}
			e, _ := sc["error"].(map[string]any)
			if e["code"] != "unauthenticated" || e["message"] != tt.message || !strings.Contains(fmt.Sprint(e["hint"]), "X-Example-Token") {
				t.Fatalf("got %v; want unauthenticated %q naming the header (body %s)", e, tt.message, body)
			}
			for _, v := range tt.header.Values("X-Example-Token") {
				if v = strings.TrimSpace(v); len(v) > 3 && (strings.Contains(body, v) || strings.Contains(log.String(), v)) {
					t.Fatal("the credential value was echoed to the client or the log")
				}
			}
		})
	}
	logs := log.String()
	if strings.Contains(logs, `"level":"ERROR"`) || strings.Contains(logs, byokSecret) {
		t.Fatalf("error-level line or configured secret in the log:\n%s", logs)
	}
	if !strings.Contains(logs, `"level":"DEBUG","msg":"tool error"`) || !strings.Contains(logs, "sent 2 times") {
		t.Fatalf("malformed credentials not logged at debug:\n%s", logs)
	}
}

func TestCredentialDeclarationsValidated(t *testing.T) {
	ok := kernel.Credential{Name: "a", Provider: "P", Header: "X-Key"}
	tests := []struct {
		name  string
		byok  bool
		creds []kernel.Credential
	}{
		{"no name", false, []kernel.Credential{{Provider: "P", Header: "X-Key"}}},
		{"no provider", false, []kernel.Credential{{Name: "a", Header: "X-Key"}}},
		{"provider with a newline", false, []kernel.Credential{{Name: "a", Provider: "P\nQ", Header: "X-Key"}}},
		{"BYOK without a header", true, []kernel.Credential{{Name: "a", Provider: "P"}}},
		{"header with a space", true, []kernel.Credential{{Name: "a", Provider: "P", Header: "Bad Header"}}},
		{"header injection", true, []kernel.Credential{{Name: "a", Provider: "P", Header: "X-Key\r\nInjected: 1"}}},
		{"Authorization", true, []kernel.Credential{{Name: "a", Provider: "P", Header: "authorization"}}},
		{"X-API-Key", true, []kernel.Credential{{Name: "a", Provider: "P", Header: "X-API-KEY"}}},
		{"Cookie", true, []kernel.Credential{{Name: "a", Provider: "P", Header: "Cookie"}}},
		{"one header for two credentials", true, []kernel.Credential{ok, {Name: "b", Provider: "P", Header: "x-key"}}},
		{"one name twice", true, []kernel.Credential{ok, {Name: "a", Provider: "P", Header: "X-Other"}}},
		{"configured value with two spaces", false, []kernel.Credential{{Name: "a", Provider: "P", Value: "s3cret value here"}}},
		{"configured value with a leading space", false, []kernel.Credential{{Name: "a", Provider: "P", Value: " s3cret"}}},
		{"configured value with a newline", false, []kernel.Credential{{Name: "a", Provider: "P", Value: "s3cret\r\nX-Admin: 1"}}},
		{"configured value too long", false, []kernel.Credential{{Name: "a", Provider: "P", Value: strings.Repeat("s", 8<<10+1)}}},
		// a token the egress gate could not remove without removing words
		{"configured value too short", false, []kernel.Credential{{Name: "a", Provider: "P", Value: "s3cret"}}},
		{"configured token too short", false, []kernel.Credential{{Name: "a", Provider: "P", Value: "Bearer-long-scheme s3cret"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := kernel.New(kernel.Info{Name: "t", Version: "v0"}, nil, &kernel.Options{BYOK: tt.byok, Credentials: tt.creds})
			if err == nil {
				t.Fatal("accepted")
			}
			if strings.Contains(err.Error(), "s3cret") {
				t.Fatalf("error shows the value: %v", err)
			}
		})
	}
	multi := []kernel.Credential{ok, {Name: "b", Provider: "P", Header: "X-App-Key", Value: byokSecret}}
	if _, err := kernel.New(kernel.Info{Name: "t", Version: "v0"}, nil, &kernel.Options{BYOK: true, Credentials: multi}); err != nil {
		t.Fatal(err)
	}
}

// TestCredentialNeverPrints: neither a declaration nor a server holding
// one shows the configured value, whatever prints it. (fmt cannot call a
// method through an unexported field, so a caller's own struct that keeps
// a Credential in one prints it raw; the Server keeps values in closures.)
func TestCredentialNeverPrints(t *testing.T) {
	c := kernel.Credential{Name: "a", Provider: "P", Header: "X-Key", Value: byokSecret}
	opts := kernel.Options{Credentials: []kernel.Credential{c}}
	srv, err := kernel.New(kernel.Info{Name: "t", Version: "v0"}, nil, &opts)
	if err != nil {
		t.Fatal(err)
	}
	type holder struct {
		C    kernel.Credential
		Ptr  *kernel.Credential
		Opts kernel.Options
	}
	h := holder{C: c, Ptr: &c, Opts: opts}
	var out []string
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d"} {
		out = append(out, fmt.Sprintf(verb, c), fmt.Sprintf(verb, h), fmt.Sprintf(verb, &c), fmt.Sprintf(verb, srv), fmt.Sprintf(verb, reflect.ValueOf(srv).Elem()))
	}
	js, _ := json.Marshal(h)
	out = append(out, string(js))
	var logs bytes.Buffer
	for _, handler := range []slog.Handler{slog.NewJSONHandler(&logs, nil), slog.NewTextHandler(&logs, nil)} {
		slog.New(handler).Info("x", "cred", c, "holder", h, slog.Any("any", c), "server", srv)
	}
	out = append(out, logs.String())
	hexSecret := fmt.Sprintf("%x", byokSecret)
	for _, s := range out {
		if strings.Contains(s, "s3cret") || strings.Contains(strings.ToLower(s), hexSecret) {
			t.Fatalf("credential printed: %s", s)
		}
	}
	if !strings.Contains(fmt.Sprint(c), `Header:"X-Key"`) {
		t.Fatalf("declaration not shown: %s", fmt.Sprint(c))
	}
}

func TestCheckCredentialHeader(t *testing.T) {
	for _, h := range []string{"X-Hetzner-Api-Token", "DD-API-KEY", "x-key"} {
		if err := identity.CheckCredentialHeader(h); err != nil {
			t.Errorf("%q: %v", h, err)
		}
	}
	for _, h := range []string{"", "Authorization", "x-api-key", "COOKIE", "a b", "a:b", strings.Repeat("x", 129)} {
		if identity.CheckCredentialHeader(h) == nil {
			t.Errorf("%q accepted", h)
		}
	}
}
