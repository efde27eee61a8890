package kernel_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/mcptest"
)

// needsSampling is a test tool that requires the client's sampling
// capability.
func needsSampling() kernel.Tool {
	return kernel.NewTool(kernel.Spec[struct{}, kernel.Text]{
		Name: "needs_sampling", Description: "Needs sampling.", Policy: readPolicy,
		Handle: func(context.Context, *kernel.Call, struct{}) (kernel.Text, error) { return "ran", nil },
	}).RequireClient(kernel.ClientSampling)
}

// capServer serves testTools plus needs_sampling over HTTP, without
// authentication, and returns the endpoint.
func capServer(t *testing.T, opts kernel.Options) (*kernel.Server, string) {
	t.Helper()
	srv, err := kernel.New(kernel.Info{Name: "t", Version: "v0"}, append(testTools(new([]string)), needsSampling()), &opts)
	if err != nil {
		t.Fatal(err)
	}
	endpoint := mcptest.ServeHTTP(t, srv, kernel.HTTPOptions{})
	return srv, endpoint
}

// TestCapabilitiesTellTheTruth: a tools-only server declares tools without
// listChanged (its set is fixed), logging, and nothing else; the methods of
// undeclared features are "method not found", not an empty answer.
func TestCapabilitiesTellTheTruth(t *testing.T) {
	f := newFixture(t, kernel.Options{})
	caps := f.sess.InitializeResult().Capabilities
	if caps.Tools == nil || caps.Tools.ListChanged {
		t.Errorf("tools capability: %+v (want declared, listChanged false)", caps.Tools)
	}
	if caps.Logging == nil {
		t.Error("logging/setLevel is served but logging is not declared")
	}
	if caps.Prompts != nil || caps.Resources != nil || caps.Completions != nil {
		t.Errorf("undeclared features advertised: prompts %+v resources %+v completions %+v", caps.Prompts, caps.Resources, caps.Completions)
	}
	ctx := context.Background()
	for name, call := range map[string]func() error{
		"prompts/list":             func() error { _, err := f.sess.ListPrompts(ctx, nil); return err },
		"prompts/get":              func() error { _, err := f.sess.GetPrompt(ctx, &mcp.GetPromptParams{Name: "x"}); return err },
		"resources/list":           func() error { _, err := f.sess.ListResources(ctx, nil); return err },
		"resources/templates/list": func() error { _, err := f.sess.ListResourceTemplates(ctx, nil); return err },
		"resources/read": func() error {
			_, err := f.sess.ReadResource(ctx, &mcp.ReadResourceParams{URI: "file:///etc/passwd"})
			return err
		},
	} {
		var je *jsonrpc.Error
		if err := call(); !errors.As(err, &je) || je.Code != jsonrpc.CodeMethodNotFound {
			t.Errorf("%s: %v, want -32601", name, err)
		}
	}
}

// TestCapabilitiesDeclaredFeatures: features the embedder declares are
// advertised without listChanged and reach its handlers.
func TestCapabilitiesDeclaredFeatures(t *testing.T) {
	srv, err := kernel.New(kernel.Info{Name: "t", Version: "v0"}, testTools(new([]string)),
		&kernel.Options{Features: kernel.Features{Prompts: true}})
	if err != nil {
		t.Fatal(err)
	}
	srv.MCP().AddPrompt(&mcp.Prompt{Name: "p"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{}, nil
	})
	s := mcptest.Connect(t, srv, nil)
	caps := s.InitializeResult().Capabilities
	if caps.Prompts == nil || caps.Prompts.ListChanged || caps.Resources != nil {
		t.Fatalf("capabilities: prompts %+v resources %+v", caps.Prompts, caps.Resources)
	}
	if res, err := s.ListPrompts(context.Background(), nil); err != nil || len(res.Prompts) != 1 {
		t.Fatalf("prompts/list: %v %+v", err, res)
	}
	if _, err := s.ListResources(context.Background(), nil); err == nil {
		t.Fatal("resources/list answered though resources are not declared")
	}
}

func TestRequireClientUnknownCapability(t *testing.T) {
	tool := needsSampling().RequireClient("telepathy")
	if _, err := kernel.New(kernel.Info{Name: "t"}, []kernel.Tool{tool}, nil); err == nil {
		t.Fatal("an unknown client capability was accepted")
	}
}

// post2026 posts a 2026-07-28 request (headers agreeing with the body).
func post2026(t *testing.T, url, method, name string, params map[string]any) (*http.Response, string) {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 9, "method": method, "params": params})
	h := map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": method}
	if name != "" {
		h["Mcp-Name"] = name
	}
	return post(t, url, string(b), h)
}

func meta2026(caps map[string]any, extra map[string]any) map[string]any {
	m := map[string]any{"io.modelcontextprotocol/protocolVersion": "2026-07-28",
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "t", "version": "0"},
		"io.modelcontextprotocol/clientCapabilities": caps}
	for k, v := range extra {
		m[k] = v
	}
	return m
}

// TestMissingClientCapability: a call of a tool that needs sampling, from
// a request that did not declare it, is -32021 with HTTP 400 and the
// missing capability named as a ClientCapabilities object; the handler
// never runs. Declared, the call goes through.
func TestMissingClientCapability(t *testing.T) {
	_, url := capServer(t, kernel.Options{})
	call := func(caps map[string]any) (*http.Response, string) {
		return post2026(t, url, "tools/call", "needs_sampling",
			map[string]any{"name": "needs_sampling", "arguments": map[string]any{}, "_meta": meta2026(caps, nil)})
	}
	resp, body := call(map[string]any{})
	var got struct {
		Error struct {
			Code int `json:"code"`
			Data struct {
				Required map[string]json.RawMessage `json:"requiredCapabilities"`
			} `json:"data"`
		} `json:"error"`
	}
	_ = json.Unmarshal([]byte(body), &got)
	if resp.StatusCode != http.StatusBadRequest || got.Error.Code != -32021 || string(got.Error.Data.Required["sampling"]) != "{}" {
		t.Fatalf("undeclared sampling: %d %s", resp.StatusCode, body)
	}
	if strings.Contains(body, "ran") {
		t.Fatalf("the handler ran: %s", body)
	}
	resp, body = call(map[string]any{"sampling": map[string]any{}})
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, "ran") {
		t.Fatalf("declared sampling: %d %s", resp.StatusCode, body)
	}
	// A tool without requirements is not affected by what the client declares.
	resp, body = post2026(t, url, "tools/call", "get_item", map[string]any{"name": "get_item",
		"arguments": map[string]any{"zone": "z", "name": "n"}, "_meta": meta2026(map[string]any{}, nil)})
	if resp.StatusCode != http.StatusOK || strings.Contains(body, `"error"`) {
		t.Fatalf("get_item: %d %s", resp.StatusCode, body)
	}
}

// TestMissingClientCapabilityLegacySession: a 2025-11-25 session without
// sampling gets -32021 too.
func TestMissingClientCapabilityLegacySession(t *testing.T) {
	srv, err := kernel.New(kernel.Info{Name: "t", Version: "v0"}, []kernel.Tool{needsSampling()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := mcptest.Connect(t, srv, nil)
	_, err = s.CallTool(context.Background(), &mcp.CallToolParams{Name: "needs_sampling", Arguments: map[string]any{}})
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != -32021 {
		t.Fatalf("legacy call without sampling: %v", err)
	}
}

// sseFrames splits an answer into its JSON-RPC messages (one JSON body, or
// the data lines of an event stream).
func sseFrames(ctype, body string) []map[string]any {
	var out []map[string]any
	if !strings.HasPrefix(ctype, "text/event-stream") {
		var m map[string]any
		_ = json.Unmarshal([]byte(body), &m)
		return append(out, m)
	}
	for line := range strings.Lines(body) {
		if d, ok := strings.CutPrefix(strings.TrimSpace(line), "data:"); ok {
			var m map[string]any
			if json.Unmarshal([]byte(strings.TrimSpace(d)), &m) == nil {
				out = append(out, m)
			}
		}
	}
	return out
}

// TestRequestStreamCarriesOnlyWhatWasAsked: a tool that logs and reports
// progress answers a request that asked for neither with the result alone;
// asked for progress only, with progress and the result, never a log
// message; a log message only when the request set a level.
func TestRequestStreamCarriesOnlyWhatWasAsked(t *testing.T) {
	_, url := capServer(t, kernel.Options{})
	for _, tc := range []struct {
		name      string
		meta      map[string]any
		want      []string // methods of the frames before the result
		forbidden string
	}{
		{"nothing asked", nil, nil, ""},
		{"progress asked", map[string]any{"progressToken": "p1"}, []string{"notifications/progress"}, "notifications/message"},
		{"log level set", map[string]any{"io.modelcontextprotocol/logLevel": "info"}, []string{"notifications/message"}, "notifications/progress"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := post2026(t, url, "tools/call", "change_ttl", map[string]any{"name": "change_ttl",
				"arguments": map[string]any{"zone": "z", "ttl": 300}, "_meta": meta2026(map[string]any{}, tc.meta)})
			frames := sseFrames(resp.Header.Get("Content-Type"), body)
			var methods []string
			for _, f := range frames {
				if m, ok := f["method"].(string); ok {
					methods = append(methods, m)
				}
			}
			if len(frames) == 0 || frames[len(frames)-1]["result"] == nil {
				t.Fatalf("no result last: %s", body)
			}
			if strings.Join(methods, ",") != strings.Join(tc.want, ",") {
				t.Fatalf("frames before the result: %q, want %q\n%s", methods, tc.want, body)
			}
		})
	}
}

// stdioClient drives ServeStdio line by line.
type stdioClient struct {
	t     *testing.T
	in    *io.PipeWriter
	lines chan map[string]any
}

func newStdioClient(t *testing.T, srv *kernel.Server) *stdioClient {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); _ = srv.ServeStdio(ctx, inR, outW); outW.Close() }()
	c := &stdioClient{t: t, in: inW, lines: make(chan map[string]any, 100)}
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				c.lines <- m
			}
		}
		close(c.lines)
	}()
	t.Cleanup(func() { cancel(); inW.Close(); outR.Close(); wg.Wait() })
	return c
}

// send writes one message; for a request (id > 0) it returns the methods
// of the notifications that came before its response.
func (c *stdioClient) send(id int, method string, params any) []string {
	c.t.Helper()
	m := map[string]any{"jsonrpc": "2.0", "method": method, "params": params}
	if id > 0 {
		m["id"] = id
	}
	b, _ := json.Marshal(m)
	if _, err := c.in.Write(append(b, '\n')); err != nil {
		c.t.Fatal(err)
	}
	if id == 0 {
		return nil
	}
	var before []string
	timeout := time.After(10 * time.Second)
	for {
		select {
		case l, ok := <-c.lines:
			if !ok {
				c.t.Fatalf("%s: the server closed its output", method)
			}
			if l["id"] == float64(id) {
				if l["error"] != nil {
					c.t.Fatalf("%s: %v", method, l["error"])
				}
				return before
			}
			if m, ok := l["method"].(string); ok {
				before = append(before, m)
			}
		case <-timeout:
			c.t.Fatalf("%s: no answer", method)
		}
	}
}

// TestStdioSessionLogLevel: over stdio, no log notification reaches a
// session before it sets a level; logging/setLevel then holds for the
// session's later calls, which get messages at or above it only; progress
// goes to a call that asked for it, whatever the level.
func TestStdioSessionLogLevel(t *testing.T) {
	f := newFixture(t, kernel.Options{})
	c := newStdioClient(t, f.srv)
	c.send(1, "initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "t", "version": "0"}})
	c.send(0, "notifications/initialized", map[string]any{})
	callTTL := func(id int, progress bool) string {
		p := map[string]any{"name": "change_ttl", "arguments": map[string]any{"zone": "z", "ttl": 300}}
		if progress {
			p["_meta"] = map[string]any{"progressToken": "p"}
		}
		return strings.Join(c.send(id, "tools/call", p), ",")
	}
	steps := []struct {
		level    string // logging/setLevel before the call; "" for none
		progress bool
		want     string
	}{
		{"", false, ""},
		{"", true, "notifications/progress"},
		{"warning", true, "notifications/progress"}, // info is below warning
		{"info", false, "notifications/message"},
		{"", true, "notifications/progress,notifications/message"}, // the level holds
		{"error", false, ""},
	}
	id := 2
	for i, s := range steps {
		if s.level != "" {
			c.send(id, "logging/setLevel", map[string]any{"level": s.level})
			id++
		}
		if got := callTTL(id, s.progress); got != s.want {
			t.Errorf("step %d (setLevel %q, progress %v): notifications %q, want %q", i, s.level, s.progress, got, s.want)
		}
		id++
	}
}
