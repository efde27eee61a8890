package gateway_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/identity"
	"github.com/bulwarkmcp/bulwark/kernel/mcptest"
	"github.com/bulwarkmcp/bulwark/kernel/seal"
	"github.com/bulwarkmcp/bulwark/servers/gateway"
)

// TestReplicasParkedRelayAnswerOnAnotherReplica: the upstream call a
// relayed question parks lives in one replica's upstream session. Its
// answer sent to another replica (sharing the requestState key) is refused
// with the documented -32602 telling the client to call the tool again
// without it; nothing reaches B's upstream, and the parked call on A is
// untouched (it ends after its wait, TestRelayParkedCallTimesOut).
func TestReplicasParkedRelayAnswerOnAnotherReplica(t *testing.T) {
	const key = "client-k3y-relay-0123456789"
	sealer, err := seal.New([]byte("0123456789abcdef0123456789abcdef-replica-relay"), nil)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := identity.ParseAPIKeys(strings.NewReader(identity.HashKey(key) + " free alice\n"))
	if err != nil {
		t.Fatal(err)
	}
	replica := func() (*fixture, string) {
		u := fakeUpstream()
		u.ReadOnlyTools = slices.Concat(readOnlyTools, []string{"elicit"})
		u.RelayElicitation = true
		f := newFixture(t, options{cfg: gateway.Config{Upstreams: []gateway.Upstream{u}}, kopts: kernel.Options{Sealer: sealer}})
		return f, mcptest.ServeHTTP(t, f.ks, kernel.HTTPOptions{Auth: keys})
	}
	a, urlA := replica()
	b, urlB := replica()
	call := func(endpoint string, responses map[string]any, state string) string {
		params := map[string]any{"name": "fake.elicit", "arguments": map[string]any{"message": "Pick a colour."}, "_meta": map[string]any{
			"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
			"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "t", "version": "0"},
			"io.modelcontextprotocol/clientCapabilities": map[string]any{"elicitation": map[string]any{"form": map[string]any{}}}}}
		if state != "" {
			params["inputResponses"], params["requestState"] = responses, state
		}
		body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
		_, out := mcptest.Post(t, endpoint, string(body), map[string]string{"Mcp-Protocol-Version": "2026-07-28",
			"Mcp-Method": "tools/call", "Mcp-Name": "fake.elicit", "Authorization": "Bearer " + key})
		return out
	}
	var first struct {
		Result map[string]any `json:"result"`
	}
	if err := json.Unmarshal([]byte(call(urlA, nil, "")), &first); err != nil || first.Result["resultType"] != "input_required" {
		t.Fatalf("first call on A: %v %v", first.Result, err)
	}
	state, _ := first.Result["requestState"].(string)
	if state == "" || gateway.Parked(a.gw) != 1 {
		t.Fatalf("the upstream call is not parked on A (state %q)", state)
	}
	before := len(b.records())
	out := call(urlB, map[string]any{"upstream_fake": map[string]any{"action": "accept", "content": map[string]any{"field0": "green"}}}, state)
	var resp struct {
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(out), &resp); err != nil || resp.Error == nil || resp.Error.Code != -32602 ||
		!strings.Contains(resp.Error.Message, "requestState") || !strings.Contains(resp.Error.Message, "again without it") {
		t.Fatalf("the answer on B: %s", out)
	}
	if strings.Contains(out, "green") {
		t.Fatalf("B relayed the answer somewhere: %s", out)
	}
	if gateway.Parked(b.gw) != 0 || gateway.Parked(a.gw) != 1 {
		t.Fatalf("parked: A %d, B %d", gateway.Parked(a.gw), gateway.Parked(b.gw))
	}
	for _, r := range b.records()[before:] {
		if r.Upstream != "" && r.Outcome == "ok" {
			t.Fatalf("B ran an upstream call: %+v", r)
		}
	}
}
