package cli

import (
	"context"
	"errors"
	"io"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	rustpadfake "github.com/bulwarkmcp/bulwark/internal/fake/rustpad"
	"github.com/bulwarkmcp/bulwark/internal/fake/vdbapi"
)

// TestEveryServerDeclaresTheTruth: each server, started as the binary
// starts it and spoken to over stdio, declares tools without listChanged
// and logging, nothing else; prompts and resources are "method not found";
// and a tool call sends no log notification to a session that set no level.
func TestEveryServerDeclaresTheTruth(t *testing.T) {
	pad := rustpadfake.Start(t)
	vdb := vdbapi.Start(t, nil)
	for _, tc := range []struct {
		sub  string
		vars map[string]string
		args []string
		tool string
		in   map[string]any
	}{
		{"dns", map[string]string{}, []string{"-data-dir", t.TempDir(), "-dns-listen", "off"},
			"create_zone", map[string]any{"name": "caps.example", "mode": "primary"}},
		{"rustpad", map[string]string{"RUSTPAD_URL": pad.URL}, nil, "append_to_document", map[string]any{"id": "caps", "text": "x"}},
		{"vdb", map[string]string{"VULNETIX_API_BASE_URL": vdb.APIURL(), "VULNETIX_SITE_BASE_URL": vdb.SiteURL()}, nil, "", nil},
	} {
		t.Run(tc.sub, func(t *testing.T) {
			var logs atomic.Int32
			cs := stdioSession(t, tc.sub, tc.vars, tc.args, &mcp.ClientOptions{
				LoggingMessageHandler: func(context.Context, *mcp.LoggingMessageRequest) { logs.Add(1) },
			})
			caps := cs.InitializeResult().Capabilities
			if caps.Tools == nil || caps.Tools.ListChanged || caps.Logging == nil {
				t.Errorf("tools %+v logging %+v: want tools without listChanged, and logging", caps.Tools, caps.Logging)
			}
			if caps.Prompts != nil || caps.Resources != nil || caps.Completions != nil {
				t.Errorf("undeclared features advertised: %+v", caps)
			}
			var je *jsonrpc.Error
			if _, err := cs.ListPrompts(context.Background(), nil); !errors.As(err, &je) || je.Code != jsonrpc.CodeMethodNotFound {
				t.Errorf("prompts/list: %v, want -32601", err)
			}
			if _, err := cs.ListResources(context.Background(), nil); !errors.As(err, &je) || je.Code != jsonrpc.CodeMethodNotFound {
				t.Errorf("resources/list: %v, want -32601", err)
			}
			if tc.tool != "" {
				if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tc.tool, Arguments: tc.in}); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := cs.ListTools(context.Background(), nil); err != nil { // a round trip after the call
				t.Fatal(err)
			}
			if n := logs.Load(); n != 0 {
				t.Errorf("%d log notifications without logging/setLevel", n)
			}
		})
	}
}

// stdioSession runs `bulwark <sub>` over stdio and connects a client.
func stdioSession(t *testing.T, sub string, vars map[string]string, args []string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	sr, cw := io.Pipe()
	cr, sw := io.Pipe()
	env := &fakeEnv{vars: vars}
	var stderr syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- Run(ctx, Env{Args: append([]string{sub}, args...), Getenv: env.Getenv, Unsetenv: env.Unsetenv, Stdin: sr, Stdout: sw, Stderr: &stderr})
	}()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "cli-test"}, opts).Connect(ctx, &mcp.IOTransport{Reader: cr, Writer: cw}, nil)
	if err != nil {
		cancel()
		t.Fatalf("connect: %v\nstderr: %s", err, stderr.String())
	}
	t.Cleanup(func() {
		cs.Close()
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Errorf("bulwark %s did not stop", sub)
		}
	})
	return cs
}
