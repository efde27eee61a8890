package kernel_test

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/mcptest"
)

// FuzzRequestState: no requestState a client makes up confirms a gated
// call. Through the protocol (2026-07-28, the client's own retry loop off):
// an empty state is asked again, anything else is -32602, and the handler
// never runs.
func FuzzRequestState(f *testing.F) {
	f.Add("")
	f.Add("AQ")
	f.Add("AQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA")
	f.Add("not base64 at all %%%")
	f.Add("-TAMPERED")
	fx := newMRTRFixture(f, kernel.Options{})
	sess := mcptest.Connect(f, fx.srv, &mcptest.Options{Client: &mcp.ClientOptions{
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}, nil
		},
	}})
	answer := mcp.InputResponseMap{"bulwark_confirm": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}}
	f.Fuzz(func(t *testing.T, state string) {
		res, err := sess.CallTool(context.Background(), &mcp.CallToolParams{Name: "delete_item", Arguments: item,
			InputResponses: answer, RequestState: state})
		switch {
		case len(fx.deleted()) != 0:
			t.Fatalf("state %q ran the call", state)
		case state == "" && (err != nil || !res.NeedsInput()):
			t.Fatalf("no state: %v %+v", err, res)
		case state != "" && err == nil:
			t.Fatalf("state %q was not refused: %+v", state, res)
		}
	})
}
