package gateway_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bulwarkmcp/bulwark/kernel/mcptest"
)

const aliceOnly = `@id("alice") permit(principal == User::"alice", action, resource);`

// listAs posts a tools/list of protocol version to f.url with the API key
// of who, and returns the response body.
func listAs(t *testing.T, f *fixture, who, version string) string {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`
	h := map[string]string{"Mcp-Protocol-Version": version, "Authorization": "Bearer key-of-" + who + "-0123456789abcdef"}
	if version == "2026-07-28" {
		body = `{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`
		h["Mcp-Method"] = "tools/list"
	}
	resp, out := mcptest.Post(t, f.url, body, h)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("tools/list as %s (%s): %d %s", who, version, resp.StatusCode, out)
	}
	return out
}

// A caller no policy lets call anything is listed no tools — an empty
// list, never null — and a list filtered per caller says it may be cached
// for that caller only, in both protocol versions.
func TestFilteredListIsEmptyAndPrivate(t *testing.T) {
	f := newFixture(t, options{kopts: policyFile(t, aliceOnly)})
	p := principals(t, f, "alice", "bob")
	if n := names(t, p["alice"]); !slices.Contains(n, "fake.echo") {
		t.Fatalf("alice sees %v", n)
	}
	if n := names(t, p["bob"]); len(n) != 0 {
		t.Fatalf("bob sees %v", n)
	}
	for _, v := range []string{"2025-11-25", "2026-07-28"} {
		bob := listAs(t, f, "bob", v)
		if !strings.Contains(bob, `"tools":[]`) || strings.Contains(bob, `"tools":null`) {
			t.Errorf("bob's list (%s): %s", v, bob)
		}
		for who, out := range map[string]string{"alice": listAs(t, f, "alice", v), "bob": bob} {
			if v == "2026-07-28" && !strings.Contains(out, `"cacheScope":"private"`) || strings.Contains(out, `"cacheScope":"public"`) {
				t.Errorf("%s's list (%s) is not private: %.300s", who, v, out)
			}
		}
	}
}

// A caller no policy lets call a tool is refused a call of it when it is
// hidden too, as permission_denied, before the reason it is hidden (what
// changed in its definition) is told; a caller who may call it is told.
func TestHiddenToolIsDeniedBeforeItsReasonIsTold(t *testing.T) {
	pin := &pinner{hash: "h1", allowed: true}
	f := newFixture(t, options{pinner: pin, kopts: policyFile(t, aliceOnly)})
	p := principals(t, f, "alice", "bob")
	pin.set("h2", false)
	p["alice"].Call(t, "fake.crash", map[string]any{}) // restarted, the upstream's tools are checked again
	deadline := time.Now().Add(15 * time.Second)
	for slices.Contains(names(t, p["alice"]), "fake.echo") {
		if time.Now().After(deadline) {
			t.Fatalf("echo was never hidden:\n%s", f.log.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	res := p["bob"].Call(t, "fake.echo", map[string]any{"text": "x"})
	wantError(t, res, "permission_denied")
	if strings.Contains(text(res), "description") || strings.Contains(text(res), "hidden") {
		t.Fatalf("bob is told why the tool is hidden: %s", text(res))
	}
	res = p["alice"].Call(t, "fake.echo", map[string]any{"text": "x"})
	wantError(t, res, "failed_precondition")
	if !strings.Contains(text(res), "its description changed") {
		t.Fatalf("alice is not told why: %s", text(res))
	}
}
