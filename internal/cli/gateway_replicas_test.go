package cli

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bulwarkmcp/bulwark/internal/fake/mcpupstream"
	"github.com/bulwarkmcp/bulwark/kernel/identity"
	"github.com/bulwarkmcp/bulwark/kernel/store/storetest"
)

// TestGatewayAdvertiseURLForwardsTheAnswer: two `bulwark gateway --http`
// replicas as an operator starts them — one Redis (BULWARK_REDIS_URL as
// storetest names it), one requestState key, each its own --advertise-url
// — in front of an upstream that asks the client by elicitation. The
// question asked through A is answered through B, and the call parked on A
// completes.
func TestGatewayAdvertiseURLForwardsTheAnswer(t *testing.T) {
	tg := storetest.New(t)
	dir := t.TempDir()
	files := map[string]string{
		"redis-url": tg.URL + "\n",
		"state-key": "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n",
		"keys":      identity.HashKey("cli-replica-key-0123456789") + " free alice\n",
		"gw.toml": fmt.Sprintf("[[upstream]]\nname = \"fake\"\ncommand = %q\nenv = [%q]\npublic_env = [%[2]q]\nread_only_tools = [\"elicit\"]\nrelay_elicitation = true\n",
			os.Args[0], mcpupstream.EnvVar),
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	replica := func() string {
		addr := freeAddr(t) // known before the replica starts: its --advertise-url
		return startReplica(t, map[string]string{mcpupstream.EnvVar: "1"}, addr, "gateway", "-auth", "apikey", "-api-keys-file", filepath.Join(dir, "keys"),
			"-redis-url-file", filepath.Join(dir, "redis-url"), "-request-state-key-file", filepath.Join(dir, "state-key"),
			"-advertise-url", "http://"+addr+"/mcp", "-config", filepath.Join(dir, "gw.toml"), "-data-dir", t.TempDir())
	}
	a, b := replica(), replica()
	call := func(url, state string) map[string]any {
		params := map[string]any{"name": "fake.elicit", "arguments": map[string]any{"message": "Pick a colour."}, "_meta": map[string]any{
			"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
			"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "t", "version": "0"},
			"io.modelcontextprotocol/clientCapabilities": map[string]any{"elicitation": map[string]any{"form": map[string]any{}}}}}
		if state != "" {
			params["inputResponses"] = map[string]any{"upstream_fake": map[string]any{"action": "accept", "content": map[string]any{"field0": "green"}}}
			params["requestState"] = state
		}
		body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(string(body)))
		for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
			"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "fake.elicit",
			"Authorization": "Bearer cli-replica-key-0123456789"} {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	first, _ := call(a, "")["result"].(map[string]any)
	state, _ := first["requestState"].(string)
	if first["resultType"] != "input_required" || state == "" {
		t.Fatalf("the question through A: %v", first)
	}
	got := call(b, state)
	if b, _ := json.Marshal(got); !strings.Contains(string(b), "elicit action=accept") || !strings.Contains(string(b), "green") {
		t.Fatalf("the answer through B: %s", b)
	}
}
