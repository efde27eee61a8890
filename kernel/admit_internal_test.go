package kernel

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/kernel/ratelimit"
)

// TestAdmissionDecidedOnce: when the HTTP layer has decided a call's
// admission, the tool layer uses that decision and checks neither the tier
// nor the limit again.
func TestAdmissionDecidedOnce(t *testing.T) {
	tiers, _ := ratelimit.NewTiers("local", "pro")
	lim, _ := ratelimit.NewLimiter(&ratelimit.LimiterOptions{Limit: 1})
	pro := NewTool(Spec[struct{}, map[string]string]{Name: "pro_tool", Description: "d",
		Policy: Policy{ReadOnly: Yes, Destructive: No, Idempotent: Yes, OpenWorld: No, Confirm: Never, Tier: "pro"},
		Handle: func(context.Context, *Call, struct{}) (map[string]string, error) { return nil, nil }})
	s, err := New(Info{Name: "t"}, []Tool{pro}, &Options{Tiers: tiers, Limiter: lim})
	if err != nil {
		t.Fatal(err)
	}
	var reached int
	next := func(context.Context, string, mcp.Request) (mcp.Result, error) { reached++; return &mcp.CallToolResult{}, nil }
	h := s.admitMiddleware(next)
	req := &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "pro_tool"}}

	// Decided "admitted" upstream: the plan "local" is below "pro", and the
	// limit of 1 would refuse the second call; neither is checked again.
	ctx := withAdmission(context.Background(), admission{tool: "pro_tool"})
	for range 2 {
		if res, err := h(ctx, "tools/call", req); err != nil || res.(*mcp.CallToolResult).IsError {
			t.Fatalf("an admitted call was decided again: %v %+v", err, res)
		}
	}
	// Decided for another tool: not trusted, decided here.
	ctx = withAdmission(context.Background(), admission{tool: "other"})
	if res, _ := h(ctx, "tools/call", req); !res.(*mcp.CallToolResult).IsError {
		t.Fatal("an admission for another tool was trusted")
	}
	if reached != 2 {
		t.Fatalf("reached the tool layer %d times, want 2", reached)
	}
}
