package rustpad_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/authz"
	"github.com/bulwarkmcp/bulwark/kernel/identity"
	"github.com/bulwarkmcp/bulwark/kernel/mcptest"
)

// TestPadAuthzOverHTTP: two API keys over HTTP against the fake Rustpad
// peer. Alice, permitted the alice-* pads, may read and append to hers;
// she cannot read bob's pad or a pad whose id differs from hers only in
// case; bob cannot read or change hers, and his refused append leaves her
// pad as it was upstream.
func TestPadAuthzOverHTTP(t *testing.T) {
	const aliceKey, bobKey = "alice-k3y-0123456789abcdef0123456789", "bob-k3y-0123456789abcdef0123456789ab"
	pf := filepath.Join(t.TempDir(), "p.cedar")
	policy := `@id("alice-pads") permit(principal == User::"alice", action, resource is Rustpad::Pad) when { resource.id like "alice-*" };
@id("bob-pads") permit(principal == User::"bob", action, resource is Rustpad::Pad) when { resource.id like "bob-*" };`
	if err := os.WriteFile(pf, []byte(policy), 0o600); err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, setup{kopts: kernel.Options{Authz: &authz.Config{PolicyFile: pf}}})
	keys, err := identity.ParseAPIKeys(strings.NewReader(identity.HashKey(aliceKey) + " free alice\n" + identity.HashKey(bobKey) + " free bob\n"))
	if err != nil {
		t.Fatal(err)
	}
	endpoint := mcptest.ServeHTTP(t, f.k, kernel.HTTPOptions{Auth: keys})
	call := func(key, tool string, args map[string]any) (isError bool, text string) {
		t.Helper()
		body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": map[string]any{"name": tool, "arguments": args}})
		resp, raw := mcptest.Post(t, endpoint, string(body), map[string]string{"Authorization": "Bearer " + key})
		var out struct {
			Result struct {
				IsError bool `json:"isError"`
				Content []struct {
					Text string `json:"text"`
				} `json:"content"`
			} `json:"result"`
		}
		if err := json.Unmarshal([]byte(raw), &out); err != nil || len(out.Result.Content) == 0 {
			t.Fatalf("%s: status %d %s", tool, resp.StatusCode, raw)
		}
		return out.Result.IsError, out.Result.Content[0].Text
	}
	denied := func(key, tool string, args map[string]any) {
		t.Helper()
		if isErr, text := call(key, tool, args); !isErr || !strings.Contains(text, "permission_denied") {
			t.Errorf("%s %v: %s, want permission_denied", tool, args, text)
		}
	}
	if isErr, text := call(aliceKey, "append_to_document", map[string]any{"id": "alice-notes", "text": "hello"}); isErr {
		t.Fatalf("alice appending to her pad: %s", text)
	}
	if isErr, text := call(aliceKey, "get_document", map[string]any{"id": "alice-notes"}); isErr || !strings.Contains(text, "hello") {
		t.Fatalf("alice reading her pad: %s", text)
	}
	denied(aliceKey, "get_document", map[string]any{"id": "bob-notes"})
	denied(aliceKey, "get_document", map[string]any{"id": "Alice-notes"})
	denied(bobKey, "get_document", map[string]any{"id": "alice-notes"})
	denied(bobKey, "append_to_document", map[string]any{"id": "alice-notes", "text": " evil"})
	denied(bobKey, "set_document", map[string]any{"id": "alice-notes", "text": "evil"})
	if got := f.peer.Text("alice-notes"); got != "hello" {
		t.Errorf("alice's pad upstream holds %q after bob's refused calls, want %q", got, "hello")
	}
}
