package store_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/confirm"
	"github.com/bulwarkmcp/bulwark/kernel/mcptest"
	"github.com/bulwarkmcp/bulwark/kernel/ratelimit"
)

type nameArgs struct {
	Name string `json:"name" jsonschema:"the thing's name"`
}

// thingTools are a gated destructive tool and a read, counting the calls
// that reach their handlers.
func thingTools(acted *int) []kernel.Tool {
	handle := func(ctx context.Context, c *kernel.Call, in nameArgs) (map[string]string, error) {
		*acted++
		return map[string]string{"name": in.Name}, nil
	}
	return []kernel.Tool{
		kernel.NewTool(kernel.Spec[nameArgs, map[string]string]{
			Name: "delete_thing", Description: "Delete a thing.", Handle: handle,
			Policy: kernel.Policy{ReadOnly: kernel.No, Destructive: kernel.Yes, Idempotent: kernel.No, OpenWorld: kernel.No,
				Confirm: kernel.Always(kernel.Bind{Target: []string{"name"}}), Tier: kernel.Open},
		}),
		kernel.NewTool(kernel.Spec[nameArgs, map[string]string]{
			Name: "get_thing", Description: "Read a thing.", Handle: handle,
			Policy: kernel.Policy{ReadOnly: kernel.Yes, Destructive: kernel.No, Idempotent: kernel.Yes, OpenWorld: kernel.No,
				Confirm: kernel.Never, Tier: kernel.Open},
		}),
	}
}

func TestKernelFailsClosedWithoutRedis(t *testing.T) {
	s := unreachable(t)
	lim, err := ratelimit.NewLimiter(&ratelimit.LimiterOptions{Limit: 100, Store: s})
	if err != nil {
		t.Fatal(err)
	}
	var acted int
	for _, tc := range []struct {
		name string
		opts kernel.Options
		tool string
	}{
		{"confirmation store", kernel.Options{Confirm: confirm.NewIssuer(s, nil)}, "delete_thing"},
		{"rate limit", kernel.Options{Confirm: confirm.NewIssuer(s, nil), Limiter: lim}, "get_thing"},
	} {
		srv, err := kernel.New(kernel.Info{Name: "t"}, thingTools(&acted), &tc.opts)
		if err != nil {
			t.Fatal(err)
		}
		sess := mcptest.Connect(t, srv.MCP(), nil)
		res, err := sess.CallTool(context.Background(), &mcp.CallToolParams{Name: tc.tool, Arguments: map[string]any{"name": "x"}})
		switch {
		case tc.opts.Limiter != nil:
			var we *jsonrpc.Error
			if !errors.As(err, &we) || we.Code != ratelimit.UnavailableCode || !strings.Contains(string(we.Data), `"store_unavailable"`) ||
				strings.Contains(we.Message, "Rate limit") {
				t.Errorf("%s: call not refused as store_unavailable: %v", tc.name, err)
			}
		case err != nil || !res.IsError || !strings.Contains(mcptest.Text(res), "Error (store_unavailable)"):
			t.Errorf("%s: call not refused with store_unavailable: %v %+v", tc.name, err, res)
		case strings.Contains(mcptest.Text(res), "127.0.0.1"):
			t.Errorf("%s: the store's address reached the client: %s", tc.name, mcptest.Text(res))
		}
	}
	if acted != 0 {
		t.Fatalf("%d calls reached a handler without the store", acted)
	}
}
