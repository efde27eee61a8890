package kernel_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/mcptest"
)

// Call.MayAsk answers by the client's declared capabilities, as AskInput
// enforces them: a client with an elicitation handler only may be asked a
// form, not a sampling, on both protocol versions.
func TestCallMayAsk(t *testing.T) {
	type none struct{}
	srv, err := kernel.New(kernel.Info{Name: "t", Version: "v0"}, []kernel.Tool{kernel.NewTool(kernel.Spec[none, string]{
		Name: "may", Description: "Says what it may ask.", Policy: readPolicy,
		Handle: func(_ context.Context, c *kernel.Call, _ none) (string, error) {
			return fmt.Sprintf("elicit=%v sample=%v", c.MayAsk(&mcp.ElicitParams{Message: "?"}),
				c.MayAsk(&mcp.CreateMessageParams{MaxTokens: 1})), nil
		},
	})}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"2025-11-25", ""} {
		sess := mcptest.Connect(t, srv, &mcptest.Options{ProtocolVersion: v, Client: &mcp.ClientOptions{
			ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) { return nil, nil },
		}})
		if got := mcptest.Text(sess.Call(t, "may", map[string]any{})); !strings.Contains(got, "elicit=true sample=false") {
			t.Fatalf("%q: %s", v, got)
		}
		bare := mcptest.Connect(t, srv, &mcptest.Options{ProtocolVersion: v})
		if got := mcptest.Text(bare.Call(t, "may", map[string]any{})); !strings.Contains(got, "elicit=false sample=false") {
			t.Fatalf("%q bare: %s", v, got)
		}
	}
}
