package gateway

import (
	"context"
	"log/slog"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/internal/fake/mcpupstream"
	"github.com/bulwarkmcp/bulwark/kernel"
)

type countingLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (c *countingLog) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.b.Write(p)
}
func (c *countingLog) count(s string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return strings.Count(c.b.String(), s)
}

// BUDGET: an upstream that floods notifications/tools/list_changed costs
// one listing at a time, not a goroutine and a listing each.
func TestListChangedFloodIsCoalesced(t *testing.T) {
	log := &countingLog{}
	g, err := New(Config{Upstreams: []Upstream{{Name: "fake", Command: os.Args[0], Env: []string{mcpupstream.EnvVar}, PublicEnv: []string{mcpupstream.EnvVar}, ReadOnlyTools: []string{"echo"}}}},
		Deps{Logger: slog.New(slog.NewTextHandler(log, nil)), Getenv: func(n string) string {
			if n == mcpupstream.EnvVar {
				return "1"
			}
			return ""
		}})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	l := g.links[0]
	l.mu.Lock()
	sess := l.sess
	l.mu.Unlock()
	before := runtime.NumGoroutine()
	for range 10000 {
		l.onListChanged(context.Background(), &mcp.ToolListChangedRequest{Session: sess})
	}
	if n := runtime.NumGoroutine() - before; n > 20 {
		t.Errorf("10000 notifications started %d goroutines", n)
	}
	deadline := time.Now().Add(5 * time.Second)
	for log.count("upstream tool list changed") == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond)
	if n := log.count("upstream tool list changed"); n < 1 || n > 2 {
		t.Errorf("10000 notifications gave %d listings, want 1 or 2", n)
	}
}

// A listing that changed between Tools() and Attach (the kernel was built
// from the older one) is published by Attach.
func TestAttachPublishesAChangeSinceTools(t *testing.T) {
	log := &countingLog{}
	g, err := New(Config{Upstreams: []Upstream{{Name: "fake", Command: os.Args[0], Env: []string{mcpupstream.EnvVar, mcpupstream.MutableVar}, PublicEnv: []string{mcpupstream.EnvVar, mcpupstream.MutableVar},
		ReadOnlyTools: []string{"echo", "mutate", "fresh"}}}},
		Deps{Logger: slog.New(slog.NewTextHandler(log, nil)), Getenv: func(n string) string {
			if n == mcpupstream.EnvVar || n == mcpupstream.MutableVar {
				return "1"
			}
			return ""
		}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := g.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	tools := g.Tools()
	l := g.links[0]
	l.mu.Lock()
	sess := l.sess
	l.mu.Unlock()
	if _, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: "mutate", Arguments: map[string]any{"change": "add"}}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for log.count("upstream tool list changed") == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	ks, err := kernel.New(kernel.Info{Name: "g"}, tools, &kernel.Options{DynamicTools: true})
	if err != nil {
		t.Fatal(err)
	}
	if slices.ContainsFunc(ks.Tools(), func(t kernel.Tool) bool { return t.Name() == "fake.fresh" }) {
		t.Fatal("the kernel was built after the change; the test proves nothing")
	}
	if err := g.Attach(ks); err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(ks.Tools(), func(t kernel.Tool) bool { return t.Name() == "fake.fresh" }) {
		t.Fatalf("the tool added before Attach is not served:\n%s", log.b.String())
	}
}
