package kernel_test

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/mcptest"
)

// TestConsentQuestionNamesTheCanonicalTarget: a tool with an Action names
// the call in the caller's words, and the question also names the target
// as it is bound, authorized and audited (docs/security.md).
func TestConsentQuestionNamesTheCanonicalTarget(t *testing.T) {
	f := newMRTRFixture(t, kernel.Options{})
	var asked []string
	sess := mcptest.Connect(t, f.srv, &mcptest.Options{Client: &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked = append(asked, r.Params.Message)
			return &mcp.ElicitResult{Action: "decline"}, nil
		},
	}, ProtocolVersion: "2025-11-25"})
	sess.Call(t, "delete_item", item)
	if len(asked) != 1 {
		t.Fatalf("asked %q", asked)
	}
	target := `{"name":"www","zone":"example.com"}` // Bind{Target: zone, name}, as bound
	if !strings.Contains(asked[0], `delete item "www"`) || !strings.Contains(asked[0], "\nTarget: "+target+"\n") {
		t.Fatalf("the question %q does not name the call and its target %q", asked[0], target)
	}
}
