package store_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/redis/go-redis/v9"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/confirm"
	"github.com/bulwarkmcp/bulwark/kernel/mcptest"
	"github.com/bulwarkmcp/bulwark/kernel/ratelimit"
	"github.com/bulwarkmcp/bulwark/kernel/store"
	"github.com/bulwarkmcp/bulwark/kernel/store/storetest"
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
		sess := mcptest.Connect(t, srv, nil)
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

// TestRedisStopsAndStartsMidRun stops the shared store under a running
// server and starts it again: every refusal meanwhile says the store is
// unreachable (never "rate limit exceeded"), the log says so once, a token
// issued before the outage is not spent by it and confirms exactly once
// after, and service resumes without a restart of the server.
func TestRedisStopsAndStartsMidRun(t *testing.T) {
	r := storetest.NewRestartable(t)
	t.Logf("against %s", r.Kind)
	c := redis.NewClient(&redis.Options{Addr: r.Addr, MaxRetries: 1, DialTimeout: time.Second})
	t.Cleanup(func() { _ = c.Close() })
	s := store.NewRedis(c, &store.RedisOptions{Timeout: time.Second})
	lim, err := ratelimit.NewLimiter(&ratelimit.LimiterOptions{Limit: 1000, Store: s})
	if err != nil {
		t.Fatal(err)
	}
	var log syncBuffer
	var acted int
	srv, err := kernel.New(kernel.Info{Name: "t"}, thingTools(&acted), &kernel.Options{Confirm: confirm.NewIssuer(s, nil),
		Limiter: lim, Logger: slog.New(slog.NewTextHandler(&log, nil)), StoreOutage: kernel.StoreOutage{Setting: "--store-outage"}})
	if err != nil {
		t.Fatal(err)
	}
	sess := mcptest.Connect(t, srv, nil)
	ctx := context.Background()
	args := map[string]any{"name": "x"}
	tok := mcptest.ConfirmToken(t, sess.Call(t, "delete_thing", args))
	confirmed := map[string]any{"name": "x", "confirmToken": tok}

	r.Stop()
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{{"get_thing", args}, {"delete_thing", confirmed}, {"get_thing", args}, {"delete_thing", confirmed}} {
		_, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: tc.tool, Arguments: tc.args})
		var we *jsonrpc.Error
		if !errors.As(err, &we) || we.Code != ratelimit.UnavailableCode || strings.Contains(we.Message, "Rate limit") || strings.Contains(we.Message, r.Addr) {
			t.Fatalf("%s during the outage: %v", tc.tool, err)
		}
	}
	if n := strings.Count(log.String(), "shared store unreachable"); n != 1 {
		t.Fatalf("the outage was logged %d times, want once:\n%s", n, log.String())
	}

	r.Start()
	deadline := time.Now().Add(10 * time.Second)
	for {
		res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: "get_thing", Arguments: args})
		if err == nil && !res.IsError {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("service did not resume: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	acted = 0
	if res := sess.Call(t, "delete_thing", confirmed); res.IsError || acted != 1 {
		t.Fatalf("the token issued before the outage: %s", mcptest.Text(res))
	}
	if res := sess.Call(t, "delete_thing", confirmed); !strings.Contains(mcptest.Text(res), "does not confirm this exact call") || acted != 1 {
		t.Fatalf("confirmed twice: %s", mcptest.Text(res))
	}
	if n := strings.Count(log.String(), "shared store answers again"); n != 1 {
		t.Fatalf("the recovery was logged %d times, want once:\n%s", n, log.String())
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }
