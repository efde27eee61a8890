package kernel_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/confirm"
	"github.com/bulwarkmcp/bulwark/kernel/mcptest"
	"github.com/bulwarkmcp/bulwark/kernel/ratelimit"
	"github.com/bulwarkmcp/bulwark/kernel/store/storetest"
)

type replicaArgs struct {
	Name string `json:"name" jsonschema:"the object's name"`
}

// replicaTools are a gated delete and a read; acted counts the calls that
// reached a handler, on any replica.
func replicaTools(acted *atomic.Int32) []kernel.Tool {
	handle := func(ctx context.Context, c *kernel.Call, in replicaArgs) (map[string]string, error) {
		acted.Add(1)
		return map[string]string{"name": in.Name}, nil
	}
	return []kernel.Tool{
		kernel.NewTool(kernel.Spec[replicaArgs, map[string]string]{
			Name: "delete_object", Description: "Delete an object.", Handle: handle,
			Policy: writePolicy(kernel.Always(kernel.Bind{Target: []string{"name"}})),
		}),
		kernel.NewTool(kernel.Spec[replicaArgs, map[string]string]{
			Name: "get_object", Description: "Read an object.", Handle: handle, Policy: readPolicy,
		}),
	}
}

// replica is one bulwark process: its own Redis client, its own server,
// on the test's Redis (storetest: a real Redis or Cluster when the
// environment names one, else miniredis; never a skip).
func replica(t *testing.T, tg *storetest.Target, limit int, acted *atomic.Int32) *mcptest.Session {
	t.Helper()
	s := tg.Store(t)
	opts := kernel.Options{Confirm: confirm.NewIssuer(s, nil)}
	if limit > 0 {
		lim, err := ratelimit.NewLimiter(&ratelimit.LimiterOptions{Limit: limit, Store: s})
		if err != nil {
			t.Fatal(err)
		}
		opts.Limiter = lim
	}
	srv, err := kernel.New(kernel.Info{Name: "replica"}, replicaTools(acted), &opts)
	if err != nil {
		t.Fatal(err)
	}
	return mcptest.Connect(t, srv, nil)
}

func TestReplicasShareConfirmationTokens(t *testing.T) {
	tg := storetest.New(t)
	var acted atomic.Int32
	a, b := replica(t, tg, 0, &acted), replica(t, tg, 0, &acted)
	args := map[string]any{"name": "www"}

	tok := token(t, a.Call(t, "delete_object", args))
	if acted.Load() != 0 {
		t.Fatal("acted without confirmation")
	}
	if res := b.Call(t, "delete_object", with(args, "confirmToken", tok)); res.IsError || acted.Load() != 1 {
		t.Fatalf("replica B refused replica A's token: %s", mcptest.Text(res))
	}
	replay := a.Call(t, "delete_object", with(args, "confirmToken", tok))
	token(t, replay)
	if !strings.Contains(mcptest.Text(replay), "does not confirm this exact call") || acted.Load() != 1 {
		t.Fatalf("replica A accepted a token spent on replica B: %s", mcptest.Text(replay))
	}
}

func TestReplicasShareRateLimit(t *testing.T) {
	tg := storetest.New(t)
	var acted atomic.Int32
	const limit = 3
	replicas := []*mcptest.Session{replica(t, tg, limit, &acted), replica(t, tg, limit, &acted)}
	args := map[string]any{"name": "www"}
	for i := range limit {
		if res := replicas[i%2].Call(t, "get_object", args); res.IsError {
			t.Fatalf("call %d refused: %s", i, mcptest.Text(res))
		}
	}
	for i, s := range replicas {
		_, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "get_object", Arguments: args})
		var we *jsonrpc.Error
		if !errors.As(err, &we) || !strings.Contains(string(we.Data), `"rate_limited"`) {
			t.Fatalf("replica %d: call over the shared limit not refused: %v", i, err)
		}
	}
	if acted.Load() != limit {
		t.Fatalf("%d calls reached a handler, want %d", acted.Load(), limit)
	}
}
