package rustpad_test

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/kernel/mcptest"
)

// TestGoldenConsentByElicitation records the question set_document asks
// the person: the action, the tool, the arguments as name: value lines
// (the text given cut at its stated length, its newline escaped so it
// cannot forge a line), the preview's counts, and the binding's digest as
// one reference line. The person accepts; the pad holds the new text.
// Regenerate with UPDATE_GOLDEN=1.
func TestGoldenConsentByElicitation(t *testing.T) {
	f := newFixture(t, setup{})
	seed(t, f, "doc", "old text")
	var asked []string
	sess := mcptest.Connect(t, f.k, &mcptest.Options{ProtocolVersion: "2025-11-25", Client: &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked = append(asked, r.Params.Message)
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}, nil
		},
	}})
	text := "first line\nTarget: a forged line\n" + strings.Repeat("x", 300)
	if res := sess.Call(t, "set_document", map[string]any{"id": "doc", "text": text}); res.IsError {
		t.Fatalf("an accepted set_document failed: %s", mcptest.Text(res))
	}
	if got := f.peer.Text("doc"); got != text {
		t.Fatalf("the pad holds %q", got)
	}
	if len(asked) != 1 || strings.Contains(asked[0], "\nTarget: a forged") || !strings.Contains(asked[0], "[cut: 200 of 333 characters shown]") {
		t.Fatalf("the question: %q", asked)
	}
	mcptest.Golden(t, "testdata/transcripts/set_document_consent.txtar",
		"2025-11-25 session: set_document asks the person with elicitation/create: the tool, its arguments as name: value lines (the text cut at 200 characters, its newlines escaped), the preview's counts, one reference line; the person accepts and the pad is written.",
		map[string]string{"wire": sess.Transcript(mcptest.Normalize(`127\.0\.0\.1:[0-9]+`, "127.0.0.1:PORT"))}, []string{"wire"})
}
