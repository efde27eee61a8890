//go:build e2e

package gatewaye2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// startEverything runs the gateway in front of server-everything alone,
// with relay set for both elicitation and sampling, and a client that
// answers both and records what it was asked.
func startEverything(t *testing.T, relay bool) (*mcp.ClientSession, *relayed) {
	t.Helper()
	nm, err := filepath.Abs("node_modules/.bin")
	if err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf(`[[upstream]]
name = "every"
command = %q
env = ["PATH"]
trust_annotations = true
relay_elicitation = %v
relay_sampling = %v
`, filepath.Join(nm, "mcp-server-everything"), relay, relay)
	file := filepath.Join(t.TempDir(), "gateway.toml")
	if err := os.WriteFile(file, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "gateway", "--config", file)
	cmd.Stderr = os.Stderr
	r := &relayed{}
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			r.add(req.Params.Message)
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Alice Example"}}, nil
		},
		CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			r.add(req.Params.SystemPrompt)
			return &mcp.CreateMessageResult{Model: "e2e-model", Role: "assistant", Content: &mcp.TextContent{Text: "sampled-answer"}}, nil
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, r
}

type relayed struct {
	mu   sync.Mutex
	msgs []string
}

func (r *relayed) add(s string) { r.mu.Lock(); r.msgs = append(r.msgs, s); r.mu.Unlock() }

func callTool(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

// server-everything (a 2025-11-25 server: it sends real elicitation/create
// and sampling/createMessage requests) has its questions relayed when the
// configuration allows it, marked as its own, and gets the answers back.
func TestEverythingRelay(t *testing.T) {
	cs, r := startEverything(t, true)
	res := callTool(t, cs, "every.trigger-elicitation-request", map[string]any{})
	if res.IsError || !strings.Contains(text(res), "Alice Example") {
		t.Fatalf("elicitation: %s", text(res))
	}
	res = callTool(t, cs, "every.trigger-sampling-request", map[string]any{"prompt": "hi", "maxTokens": 50})
	if res.IsError || !strings.Contains(text(res), "sampled-answer") {
		t.Fatalf("sampling: %s", text(res))
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.msgs) != 2 {
		t.Fatalf("asked %q", r.msgs)
	}
	for _, m := range r.msgs {
		if !strings.HasPrefix(m, `[asked by the upstream server "every" through the gateway, not by bulwark] `) {
			t.Fatalf("not marked: %q", m)
		}
	}
}

// Without the relay keys the gateway offers server-everything neither
// capability, so it does not even offer the tools that would ask.
func TestEverythingNoRelay(t *testing.T) {
	cs, r := startEverything(t, false)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(tool.Name, "every.trigger-elicitation") || strings.HasPrefix(tool.Name, "every.trigger-sampling") {
			t.Fatalf("%s is offered without the relay", tool.Name)
		}
	}
	if len(r.msgs) != 0 {
		t.Fatal("the client was asked")
	}
}
