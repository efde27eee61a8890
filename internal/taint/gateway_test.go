package taint_test

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/internal/taint"
	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/audit"
	"github.com/bulwarkmcp/bulwark/servers/gateway"
)

func TestMain(m *testing.M) {
	taint.MaybeServe()
	os.Exit(m.Run())
}

// startGateway runs `bulwark gateway`'s server in front of the hostile
// upstream in encoding enc, as internal/cli builds it: the upstream's
// secret variable registered, questions relayed.
func startGateway(t *testing.T, enc string, log io.Writer) *kernel.Server {
	t.Helper()
	u := gateway.Upstream{Name: "taint", Command: os.Args[0],
		Env:           []string{taint.UpstreamVar, taint.EncodingVar, taint.SecretVar},
		PublicEnv:     []string{taint.UpstreamVar, taint.EncodingVar},
		ReadOnlyTools: taint.Tools, RelayElicitation: true, RelaySampling: true}
	env := map[string]string{taint.UpstreamVar: "1", taint.EncodingVar: enc, taint.SecretVar: taint.Marker}
	gw, err := gateway.New(gateway.Config{Upstreams: []gateway.Upstream{u}},
		gateway.Deps{Getenv: func(n string) string { return env[n] }, Logger: logTo(log)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := gw.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(gw.Close)
	opts := kernel.Options{DynamicTools: true, Envelope: gw.Envelope(), Credentials: gw.Credentials(), Secrets: gw.Secrets(), Features: gw.Features(),
		Audit: gw.Audit(audit.NewJSONLines(log)), Logger: logTo(log)}
	if tr := gw.TaskRelay(); tr != nil { // as internal/cli builds it
		opts.Tasks = tr
	}
	ks, err := kernel.New(kernel.Info{Name: "bulwark-gateway", Instructions: gw.Instructions()}, gw.Tools(), &opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := gw.Attach(ks); err != nil {
		t.Fatal(err)
	}
	return ks
}

// clientOptions answer the relayed questions: a decline, a sampled text.
func clientOptions() *mcp.ClientOptions {
	return &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "decline"}, nil
		},
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Role: "assistant", Model: "m", Content: &mcp.TextContent{Text: "ok"}}, nil
		},
	}
}

// exercise lists the tools and calls each, asking for progress and log
// messages, over cs.
func exercise(t *testing.T, cs *mcp.ClientSession) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Errorf("tools/list: %v", err)
	}
	_ = cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"})
	if _, err := cs.ListPrompts(ctx, nil); err != nil {
		t.Errorf("prompts/list: %v", err)
	}
	for _, name := range taint.Prompts {
		_, _ = cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "taint." + name, Arguments: map[string]string{"a": "x"}})
	}
	for _, err := range exerciseResources(ctx, cs) { // resources_test.go
		t.Errorf("resources: %v", err)
	}
	for _, name := range taint.Tools {
		if name == "t_notify" {
			// an upstream's log message goes to a call only while it is
			// the one call in flight (its predecessors' grace included)
			time.Sleep(300 * time.Millisecond)
		}
		cctx, ccancel := context.WithTimeout(ctx, 15*time.Second)
		start := time.Now()
		_, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: "taint." + name, Arguments: map[string]any{},
			Meta: mcp.Meta{"progressToken": "p-" + name, mcp.MetaKeyLogLevel: "debug"}}) // an error is a finding's business, not the run's
		if d := time.Since(start); d > 5*time.Second {
			t.Logf("%s took %v: %v", name, d, err)
		}
		ccancel()
	}
}

// logTo logs everything, debug included, as text to w.
func logTo(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// TestTaintGatewayURLTasks: the hostile upstream as a URL upstream
// (taint.HTTPUpstream), its secret the gateway's credential for it; raw
// 2025-11-25 clients over stdio and HTTP create a task, get, list, fetch
// and cancel it, and nothing they read holds the secret in any decoding,
// an envelope tag outside an envelope, or a character cleaning removes.
func TestTaintGatewayURLTasks(t *testing.T) {
	for _, enc := range taint.Run() {
		t.Run(enc.Name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(taint.HTTPUpstream(enc, taint.Marker))
			t.Cleanup(srv.Close)
			cred := filepath.Join(t.TempDir(), "cred")
			if err := os.WriteFile(cred, []byte(taint.Marker+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			var log taint.Buffer
			u := gateway.Upstream{Name: "taint", URL: srv.URL + "/mcp", CredentialFile: cred, ReadOnlyTools: taint.Tools}
			gw, err := gateway.New(gateway.Config{Upstreams: []gateway.Upstream{u}}, gateway.Deps{Getenv: func(string) string { return "" }, Logger: logTo(&log)})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := gw.Start(ctx); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(gw.Close)
			tr := gw.TaskRelay()
			if tr == nil {
				t.Fatal("the URL upstream's tasks are not relayed")
			}
			opts := kernel.Options{DynamicTools: true, Envelope: gw.Envelope(), Credentials: gw.Credentials(), Secrets: gw.Secrets(), Features: gw.Features(),
				Audit: gw.Audit(audit.NewJSONLines(&log)), Logger: logTo(&log), Tasks: tr}
			ks, err := kernel.New(kernel.Info{Name: "bulwark-gateway", Instructions: gw.Instructions()}, gw.Tools(), &opts)
			if err != nil {
				t.Fatal(err)
			}
			if err := gw.Attach(ks); err != nil {
				t.Fatal(err)
			}
			c := taint.NewChecker(taint.Marker)
			taint.TasksOverStdio(t, ks, c)
			taint.TasksOverHTTP(t, ks, c)
			c.Text("log", string(log.Bytes()))
			if c.Messages < 10 {
				t.Fatalf("only %d messages read: the run did not happen", c.Messages)
			}
			for _, f := range []string{"Task.statusMessage", "CallToolResult.structuredContent"} { // the task's status and result, relayed
				if !c.Visited[f] {
					t.Errorf("no hostile %s reached a client: the task was not relayed", f)
				}
			}
			taint.Report(t, enc, c)
		})
	}
}
