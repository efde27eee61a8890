package gateway_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/internal/fake/mcpupstream"
	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/identity"
	"github.com/bulwarkmcp/bulwark/kernel/mcptest"
	"github.com/bulwarkmcp/bulwark/servers/gateway"
)

const upstreamCredential = "upstream-cred-0123456789"

func httpUpstream(t *testing.T, h http.Handler) gateway.Upstream {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	file := filepath.Join(t.TempDir(), "cred")
	if err := os.WriteFile(file, []byte(upstreamCredential+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return gateway.Upstream{Name: "remote", URL: srv.URL + "/mcp", CredentialFile: file, ReadOnlyTools: readOnlyTools}
}

// A URL upstream gets the configured credential and nothing of the client's;
// an upstream that echoes the credential has it scrubbed from the result.
func TestHTTPUpstreamGetsItsOwnCredentialOnly(t *testing.T) {
	fake := mcpupstream.NewServer(nil)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return fake }, nil)
	u := httpUpstream(t, h)
	f := newFixture(t, options{cfg: gateway.Config{Upstreams: []gateway.Upstream{u}}})
	res := f.sess.Call(t, "remote.whoami", map[string]any{"x": 1})
	got := text(res)
	if res.IsError || !strings.Contains(got, "Authorization: Bearer [redacted]") {
		t.Fatalf("the upstream did not get the configured credential (or it was not scrubbed): %s", got)
	}
	if strings.Contains(got, upstreamCredential) || strings.Contains(got, "confirmToken") {
		t.Fatalf("result: %s", got)
	}
	if res := f.sess.Call(t, "remote.echo", map[string]any{"text": "hi"}); res.IsError || !strings.Contains(text(res), "hi") {
		t.Fatalf("echo over HTTP: %s", text(res))
	}
}

// A redirect is never followed (the credential would go to another host).
func TestHTTPUpstreamRedirectIsRefused(t *testing.T) {
	var target *httptest.Server
	target = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("the redirect was followed, with Authorization %q", r.Header.Get("Authorization"))
	}))
	defer target.Close()
	u := httpUpstream(t, http.RedirectHandler(target.URL+"/mcp", http.StatusTemporaryRedirect))
	gw, err := gateway.New(gateway.Config{Upstreams: []gateway.Upstream{u}}, gateway.Deps{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err = gw.Start(ctx)
	if err == nil {
		gw.Close()
		t.Fatal("started through a redirect")
	}
	if strings.Contains(err.Error(), upstreamCredential) {
		t.Fatalf("the error shows the credential: %v", err)
	}
}

// The client's own credential (its API key to the gateway) never reaches
// the upstream: the gateway sends the upstream's configured credential only.
func TestClientCredentialIsNotPassedThrough(t *testing.T) {
	const clientKey = "client-k3y-0123456789abcdef"
	fake := mcpupstream.NewServer(nil)
	u := httpUpstream(t, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return fake }, nil))
	f := newFixture(t, options{cfg: gateway.Config{Upstreams: []gateway.Upstream{u}}})
	keys, err := identity.ParseAPIKeys(strings.NewReader(identity.HashKey(clientKey) + " free alice\n"))
	if err != nil {
		t.Fatal(err)
	}
	endpoint := mcptest.ServeHTTP(t, f.ks, kernel.HTTPOptions{Auth: keys})
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"remote.whoami","arguments":{}}}`
	req, _ := http.NewRequest("POST", endpoint, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	req.Header.Set("Authorization", "Bearer "+clientKey)
	req.Header.Set("X-Api-Key", clientKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	got := string(b)
	if !strings.Contains(got, "headers:") || !strings.Contains(got, "Bearer [redacted]") {
		t.Fatalf("whoami over HTTP: %d %s", resp.StatusCode, got)
	}
	if strings.Contains(got, clientKey) || strings.Contains(strings.ToLower(got), "x-api-key") {
		t.Fatalf("the client's credential reached the upstream: %s", got)
	}
}

// extraMember is middleware that adds the member "x-extra" to every tool
// object of the tools/list results the handler writes, in either response
// form (a JSON body or an event stream): a member the go-sdk's mcp.Tool
// does not model.
func extraMember(h http.Handler, value string) http.Handler {
	return rewriteList(h, `"inputSchema":`, `"x-extra":"`+value+`","inputSchema":`)
}

// rewriteList is middleware that replaces old by new in the tools/list
// results the handler writes, in either response form.
func rewriteList(h http.Handler, old, new string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(&extraWriter{ResponseWriter: w, old: []byte(old), new: []byte(new)}, r)
	})
}

type extraWriter struct {
	http.ResponseWriter
	old, new []byte
}

func (e *extraWriter) WriteHeader(code int) {
	e.Header().Del("Content-Length") // the body grows
	e.ResponseWriter.WriteHeader(code)
}

func (e *extraWriter) Write(p []byte) (int, error) {
	if bytes.Contains(p, []byte(`"tools":[`)) {
		if _, err := e.ResponseWriter.Write(bytes.ReplaceAll(p, e.old, e.new)); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	return e.ResponseWriter.Write(p)
}

func (e *extraWriter) Flush() {
	if f, ok := e.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// A URL upstream's tools are pinned as they arrived on the wire too, in
// both of the Streamable HTTP answer forms: a member the go-sdk does not
// model that changes between two starts hides the tool, and the log names
// it.
func TestHTTPRawWireMemberIsPinned(t *testing.T) {
	for _, jsonResponse := range []bool{false, true} {
		t.Run(fmt.Sprintf("json=%v", jsonResponse), func(t *testing.T) {
			st := pinStore(t, &syncBuf{})
			fake := mcpupstream.NewServer(nil)
			upstream := func(value string) gateway.Upstream {
				h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return fake }, &mcp.StreamableHTTPOptions{JSONResponse: jsonResponse})
				return httpUpstream(t, extraMember(h, value))
			}
			first := newFixture(t, options{pinner: st, cfg: gateway.Config{Upstreams: []gateway.Upstream{upstream("one")}}})
			if !slices.Contains(toolNames(t, first), "remote.echo") {
				t.Fatal("echo not listed on first use")
			}
			same := newFixture(t, options{pinner: st, cfg: gateway.Config{Upstreams: []gateway.Upstream{upstream("one")}}})
			if !slices.Contains(toolNames(t, same), "remote.echo") {
				t.Fatal("echo not listed when nothing changed")
			}
			second := newFixture(t, options{pinner: st, cfg: gateway.Config{Upstreams: []gateway.Upstream{upstream("two")}}})
			if names := toolNames(t, second); len(names) != 0 {
				t.Fatalf("tools whose x-extra changed are listed: %v", names)
			}
			if !strings.Contains(second.log.String(), "x-extra changed") {
				t.Errorf("the log does not name the changed member:\n%s", second.log.String())
			}
		})
	}
}
