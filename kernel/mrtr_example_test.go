package kernel_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/kernel"
)

// A tool that asks the client before it answers (SEP-2322). The handler
// returns AskInput on the first round; the kernel seals the state and the
// client's answer comes back through Call.Elicited on the next one. The
// go-sdk client here answers by itself; a host would show the form to its
// user.
func ExampleAskInput() {
	type noArgs struct{}
	greet := kernel.NewTool(kernel.Spec[noArgs, kernel.Text]{
		Name: "greet", Description: "Asks the user's name, then greets.",
		Policy: kernel.Policy{ReadOnly: kernel.Yes, Destructive: kernel.No, Idempotent: kernel.Yes, OpenWorld: kernel.No,
			Confirm: kernel.Never, Tier: kernel.Open},
		Handle: func(ctx context.Context, call *kernel.Call, _ noArgs) (kernel.Text, error) {
			if ans, ok := call.Elicited("name"); ok && ans.Action == "accept" {
				return kernel.Text(fmt.Sprintf("Hello, %v (state %q)", ans.Content["name"], call.State())), nil
			}
			return "", kernel.AskInput(mcp.InputRequestMap{"name": &mcp.ElicitParams{
				Message:         "What is your name?",
				RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}},
			}}, []byte("asked once"))
		},
	}).AsksInput()

	srv, err := kernel.New(kernel.Info{Name: "greeter", Version: "v1"}, []kernel.Tool{greet}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	if _, err := srv.Connect(ctx, st, nil); err != nil {
		fmt.Println(err)
		return
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "example", Version: "v0"}, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
		},
	})
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "greet"})
	if err != nil {
		fmt.Println(err)
		return
	}
	text := res.Content[0].(*mcp.TextContent).Text // enveloped, like every result
	fmt.Println(strings.Contains(text, `Hello, Ada (state "asked once")`))
	// Output:
	// true
}
