package kernel_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/mcptest"
)

// A dynamic tool whose schema has no property to bind (a tool mirrored from
// another server) is gated through its Preview's target: the token is bound
// to what the Preview computed, so a change in it (a new definition of the
// tool) voids a pending token.
func TestDynamicToolPreviewBindsTarget(t *testing.T) {
	version := "v1"
	calls := 0
	dyn := func(ownTarget bool) kernel.Tool {
		return kernel.NewDynamicTool(kernel.DynamicSpec{
			Name: "reset_all", Description: "Resets everything.",
			Policy: kernel.Policy{ReadOnly: kernel.No, Destructive: kernel.Yes, Idempotent: kernel.No, OpenWorld: kernel.Yes,
				Confirm: kernel.Always(kernel.Bind{Target: []string{"*"}}), Tier: kernel.Open},
			Schema: &jsonschema.Schema{Type: "object"},
			Handle: func(context.Context, *kernel.Call, json.RawMessage) (any, error) {
				calls++
				return kernel.Text("done"), nil
			},
			Preview: func(context.Context, *kernel.Call, json.RawMessage) (kernel.Preview, error) {
				return kernel.Preview{Target: `{"pin":"` + version + `"}`}, nil
			},
			PreviewBindsTarget: ownTarget,
		})
	}
	if _, err := kernel.New(kernel.Info{Name: "t"}, []kernel.Tool{dyn(false)}, nil); err == nil || !strings.Contains(err.Error(), "not an argument") {
		t.Fatalf("without PreviewBindsTarget: %v, want the unbound-field error", err)
	}
	ks, err := kernel.New(kernel.Info{Name: "t"}, []kernel.Tool{dyn(true)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	sess := mcptest.Connect(t, ks, nil)
	tok := mcptest.ConfirmToken(t, sess.Call(t, "reset_all", map[string]any{}))
	version = "v2" // the definition changed between the two calls
	res := sess.Call(t, "reset_all", map[string]any{"confirmToken": tok})
	if !res.IsError || calls != 0 {
		t.Fatalf("a token issued under v1 confirmed a call under v2: %s", mcptest.Text(res))
	}
	tok = mcptest.ConfirmToken(t, res)
	if res := sess.Call(t, "reset_all", map[string]any{"confirmToken": tok}); res.IsError || calls != 1 {
		t.Fatalf("confirmed call failed: %s", mcptest.Text(res))
	}
}
