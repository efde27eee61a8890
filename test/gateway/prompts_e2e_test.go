//go:build e2e

package gatewaye2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestPromptsRelayedFromServerEverything: server-everything's prompts are
// listed as every.<prompt>, declared in the capabilities, and a get comes
// back enveloped; resources are declared too; the instructions say what
// is relayed.
func TestPromptsRelayedFromServerEverything(t *testing.T) {
	g := start(t)
	init := g.cs.InitializeResult()
	if init.Capabilities.Prompts == nil || init.Capabilities.Resources == nil {
		t.Fatalf("capabilities: %+v", init.Capabilities)
	}
	if !strings.Contains(init.Instructions, `The server "every" (tools every.*) is reached without the client capabilities roots, elicitation and sampling`) ||
		!strings.Contains(init.Instructions, "Its prompts are relayed as every.<prompt>") {
		t.Errorf("instructions: %s", init.Instructions)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := g.cs.ListPrompts(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	var simple *mcp.Prompt
	for _, p := range res.Prompts {
		names = append(names, p.Name)
		if !strings.HasPrefix(p.Name, "every.") || !strings.HasPrefix(p.Description, `[relayed from the MCP server "every"`) {
			t.Errorf("prompt %q: %q", p.Name, p.Description)
		}
		if len(p.Arguments) == 0 && simple == nil {
			simple = p
		}
	}
	t.Logf("prompts: %q", names)
	if simple == nil {
		t.Fatalf("no prompt without arguments among %q", names)
	}
	got, err := g.cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: simple.Name})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Messages) == 0 {
		t.Fatalf("%s: no messages", simple.Name)
	}
	for _, m := range got.Messages {
		if tc, ok := m.Content.(*mcp.TextContent); ok && !strings.HasPrefix(tc.Text, `<untrusted-data source="mcp-upstream">`) {
			t.Errorf("%s: a text message outside the envelope: %q", simple.Name, tc.Text)
		}
	}
}
