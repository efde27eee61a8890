package conformance_test

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/internal/conformance"
)

// TestMRTRTools runs the fixture's multi-round-trip tools with the go-sdk
// client over HTTP on 2026-07-28: its retry loop answers each
// input-required result with its handlers, as the suite's scenarios do by
// hand, and every tool completes (the multi-round one after two rounds).
func TestMRTRTools(t *testing.T) {
	url := serve(t)
	c := mcp.NewClient(&mcp.Implementation{Name: "mrtr-test", Version: "v0"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Alice", "color": "blue", "ok": "yes", "context": "c"}}, nil
		},
		CreateMessageWithToolsHandler: func(context.Context, *mcp.CreateMessageWithToolsRequest) (*mcp.CreateMessageWithToolsResult, error) {
			return &mcp.CreateMessageWithToolsResult{Role: "assistant", Model: "m", Content: []mcp.Content{&mcp.TextContent{Text: "Paris"}}}, nil
		},
		Capabilities: &mcp.ClientCapabilities{RootsV2: &mcp.RootCapabilities{}},
	})
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	c.AddRoots(&mcp.Root{URI: "file:///test/root", Name: "root"})
	want := map[string]string{
		"test_input_required_result_elicitation":     "Hello, Alice!",
		"test_input_required_result_sampling":        "Paris",
		"test_input_required_result_list_roots":      "file:///test/root",
		"test_input_required_result_request_state":   conformance.StateOK,
		"test_input_required_result_tampered_state":  conformance.StateOK,
		"test_input_required_result_multiple_inputs": "name Alice",
		"test_input_required_result_multi_round":     "blue",
		"test_input_required_result_capabilities":    "Thanks",
	}
	for name, w := range want {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: map[string]any{}})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := text(t, res); res.IsError || !strings.Contains(got, w) {
			t.Errorf("%s: %s", name, got)
		}
	}
	p, err := cs.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: "test_input_required_result_prompt"})
	if err != nil || len(p.Messages) != 1 {
		t.Fatalf("prompt: %v %+v", err, p)
	}
}
