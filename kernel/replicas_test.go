package kernel_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/redis/go-redis/v9"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/confirm"
	"github.com/bulwarkmcp/bulwark/kernel/mcptest"
	"github.com/bulwarkmcp/bulwark/kernel/ratelimit"
	"github.com/bulwarkmcp/bulwark/kernel/seal"
	"github.com/bulwarkmcp/bulwark/kernel/store"
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

// replicaSealer is the requestState key replicas share
// (--request-state-key-file).
func replicaSealer(t *testing.T) *seal.Sealer {
	t.Helper()
	key := make([]byte, 32)
	for i := range key {
		key[i] = byte(i + 7)
	}
	s, err := seal.New(key, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestReplicasShareRequestState: a multi-round-trip call asked on replica
// A (the gate asks the person; its requestState carries a single-use token
// in the shared store) is answered on replica B, once: the answer replayed
// on A or B is refused.
func TestReplicasShareRequestState(t *testing.T) {
	tg := storetest.New(t)
	sealer := replicaSealer(t)
	a := newMRTRFixture(t, kernel.Options{Confirm: confirm.NewIssuer(tg.Store(t), nil), Sealer: sealer})
	b := newMRTRFixture(t, kernel.Options{Confirm: confirm.NewIssuer(tg.Store(t), nil), Sealer: sealer})
	state := a.ask(t, apiKey, item)
	if r := b.call2026(t, apiKey, "delete_item", item, elicitCaps, accept, state); r.Error != nil || r.Result.IsError || len(b.deleted()) != 1 {
		t.Fatalf("replica B: %+v", r)
	}
	for _, f := range []*mrtrFixture{a, b} {
		if r := f.call2026(t, apiKey, "delete_item", item, elicitCaps, accept, state); r.Error == nil || r.Error.Code != -32602 {
			t.Fatalf("replayed: %+v", r)
		}
	}
	if len(a.deleted())+len(b.deleted()) != 1 {
		t.Fatal("the call ran more than once")
	}
}

// TestReplicasRequestStateDuringAnOutage: the answer reaches replica B
// while the shared store is down: it is refused as store_unavailable
// (never "invalid requestState", which would tell the client to start
// over), nothing runs, and once the store is back the same answer runs the
// call once.
func TestReplicasRequestStateDuringAnOutage(t *testing.T) {
	r := storetest.NewRestartable(t)
	sealer := replicaSealer(t)
	replica := func() *mrtrFixture {
		c := redis.NewClient(&redis.Options{Addr: r.Addr, MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
		t.Cleanup(func() { _ = c.Close() })
		s := store.NewRedis(c, &store.RedisOptions{Timeout: time.Second})
		return newMRTRFixture(t, kernel.Options{Confirm: confirm.NewIssuer(s, nil), Sealer: sealer})
	}
	a, b := replica(), replica()
	state := a.ask(t, apiKey, item)
	r.Stop()
	res := b.call2026(t, apiKey, "delete_item", item, elicitCaps, accept, state)
	if res.Error != nil || !res.Result.IsError || !strings.Contains(fmt.Sprint(res.Result.Content), "store_unavailable") || len(b.deleted()) != 0 {
		t.Fatalf("the answer during the outage: %+v", res)
	}
	r.Start()
	if res := b.call2026(t, apiKey, "delete_item", item, elicitCaps, accept, state); res.Error != nil || res.Result.IsError || len(b.deleted()) != 1 {
		t.Fatalf("the answer after the outage: %+v", res)
	}
}
