package kernel_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/kernel"
)

// A notes server with one read tool and one gated write tool: the write is
// refused once with a token bound to its exact arguments, and runs when the
// same arguments come back with that token.
func Example_server() {
	notes := map[string]string{"todo": "buy milk"}

	type readIn struct {
		Name string `json:"name" jsonschema:"the note to read"`
	}
	type readOut struct {
		Text string `json:"text"`
	}
	read := kernel.NewTool(kernel.Spec[readIn, readOut]{
		Name:        "read_note",
		Description: "Read one note.",
		Policy: kernel.Policy{
			ReadOnly: kernel.Yes, Destructive: kernel.No, Idempotent: kernel.Yes, OpenWorld: kernel.No,
			Confirm: kernel.Never, Tier: kernel.Open,
		},
		Handle: func(ctx context.Context, call *kernel.Call, in readIn) (readOut, error) {
			return readOut{Text: notes[in.Name]}, nil
		},
	})

	type writeIn struct {
		Name string `json:"name" jsonschema:"the note to overwrite"`
		Text string `json:"text" jsonschema:"its new text"`
	}
	write := kernel.NewTool(kernel.Spec[writeIn, readOut]{
		Name:        "overwrite_note",
		Description: "Replace the text of a note.",
		Policy: kernel.Policy{
			ReadOnly: kernel.No, Destructive: kernel.Yes, Idempotent: kernel.Yes, OpenWorld: kernel.No,
			Confirm: kernel.Always(kernel.Bind{Target: []string{"name"}, Payload: []string{"text"}}),
			Tier:    kernel.Open,
		},
		Handle: func(ctx context.Context, call *kernel.Call, in writeIn) (readOut, error) {
			notes[in.Name] = in.Text
			return readOut{Text: in.Text}, nil
		},
	})

	srv, err := kernel.New(kernel.Info{Name: "notes", Version: "v1"}, []kernel.Tool{read, write}, nil)
	if err != nil {
		fmt.Println("declaration refused:", err)
		return
	}

	// An in-process client; a real server would call srv.ServeStdio or serve HTTP.
	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	if _, err := srv.Connect(ctx, st, nil); err != nil {
		fmt.Println(err)
		return
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "example", Version: "v0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer cs.Close()

	call := func(name string, args map[string]any) map[string]any {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			fmt.Println(err)
			return nil
		}
		var out map[string]any
		b, _ := json.Marshal(res.StructuredContent)
		_ = json.Unmarshal(b, &out)
		return out
	}

	args := map[string]any{"name": "todo", "text": "buy oat milk"}
	refused := call("overwrite_note", args)
	refusal, _ := refused["error"].(map[string]any)
	fmt.Println("first call:", refusal["code"])
	token, _ := refused["confirmToken"].(string)
	fmt.Println("token issued:", len(token) > 0, "expires in", refused["expiresInSeconds"], "s")

	// The same token for other arguments does not confirm them.
	other := map[string]any{"name": "todo", "text": "sell the car", "confirmToken": token}
	refusal, _ = call("overwrite_note", other)["error"].(map[string]any)
	fmt.Println("other arguments:", refusal["code"])

	args["confirmToken"] = token
	call("overwrite_note", args)
	fmt.Println("note now:", notes["todo"])
	// Output:
	// first call: confirmation_required
	// token issued: true expires in 300 s
	// other arguments: confirmation_required
	// note now: buy oat milk
}
