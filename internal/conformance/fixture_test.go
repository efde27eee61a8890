package conformance_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/internal/conformance"
	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/mcptest"
)

// serve starts the fixture behind the kernel's whole HTTP surface on a real
// loopback listener (the Host guard needs the local address) and returns the
// MCP endpoint.
func serve(t *testing.T) string {
	t.Helper()
	srv, err := conformance.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return mcptest.ServeHTTP(t, srv, kernel.HTTPOptions{})
}

func connect(t *testing.T, url, version string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "conformance-test", Version: "v0"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect (%s): %v", version, err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func text(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	if len(res.Content) != 1 {
		t.Fatalf("want one content item, got %d", len(res.Content))
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("want text content, got %T", res.Content[0])
	}
	return tc.Text
}

// TestToolsThroughTheKernel calls fixture tools over HTTP in both protocol
// eras, as the suite does, and checks what the kernel made of them.
func TestToolsThroughTheKernel(t *testing.T) {
	url := serve(t)
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			cs := connect(t, url, version)
			ctx := context.Background()
			list, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tl := range list.Tools {
				names = append(names, tl.Name)
				if tl.Annotations == nil || tl.Annotations.ReadOnlyHint != true {
					t.Errorf("%s: want readOnlyHint from the kernel's policy, got %+v", tl.Name, tl.Annotations)
				}
			}
			for _, want := range []string{"test_simple_text", "test_error_handling", "test_tool_with_progress", "json_schema_2020_12_tool"} {
				if !slices.Contains(names, want) {
					t.Errorf("tools/list lacks %s: %v", want, names)
				}
			}

			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "test_simple_text", Arguments: map[string]any{}})
			if err != nil || res.IsError {
				t.Fatalf("test_simple_text: %v %+v", err, res)
			}
			if got := text(t, res); !strings.Contains(got, conformance.SimpleText) || !strings.HasPrefix(got, `<untrusted-data source="conformance-fixture">`) {
				t.Errorf("test_simple_text: want the text inside the envelope, got %q", got)
			}

			res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "test_error_handling", Arguments: map[string]any{}})
			if err != nil || !res.IsError || !strings.Contains(text(t, res), conformance.ErrorText) {
				t.Fatalf("test_error_handling: want a tool error, got %v %+v", err, res)
			}

			res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "test_image_content", Arguments: map[string]any{}})
			if err != nil || res.IsError {
				t.Fatalf("test_image_content: %v %+v", err, res)
			}
			if img, ok := res.Content[0].(*mcp.ImageContent); !ok || img.MIMEType != "image/png" || string(img.Data) != string(conformance.PNG()) {
				t.Errorf("test_image_content: want the image as an image block, got %+v", res.Content)
			}

			_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "no_such_tool", Arguments: map[string]any{}})
			if err == nil || !strings.Contains(err.Error(), "unknown tool") {
				t.Errorf("unknown tool: want a protocol error, got %v", err)
			}
		})
	}
}

// TestResourcesPromptsCompletion covers what the fixture registers on the
// go-sdk server beside the kernel's tools.
func TestResourcesPromptsCompletion(t *testing.T) {
	cs := connect(t, serve(t), "2025-11-25")
	ctx := context.Background()

	rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: conformance.StaticTextURI})
	if err != nil || len(rr.Contents) != 1 || rr.Contents[0].Text != conformance.StaticText {
		t.Fatalf("static text: %v %+v", err, rr)
	}
	rr, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: conformance.StaticBinaryURI})
	if err != nil || len(rr.Contents) != 1 || string(rr.Contents[0].Blob) != string(conformance.PNG()) {
		t.Fatalf("static binary: %v %+v", err, rr)
	}
	rr, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://template/123/data"})
	if err != nil || len(rr.Contents) != 1 || !strings.Contains(rr.Contents[0].Text, `"id":"123"`) {
		t.Fatalf("template: %v %+v", err, rr)
	}
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://nonexistent-resource-for-conformance-testing"}); err == nil {
		t.Error("unknown resource: want an error")
	}

	gp, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "test_prompt_with_arguments", Arguments: map[string]string{"arg1": "a", "arg2": "b"}})
	if err != nil || len(gp.Messages) != 1 || gp.Messages[0].Content.(*mcp.TextContent).Text != "Prompt with arguments: arg1='a', arg2='b'" {
		t.Fatalf("prompt with arguments: %v %+v", err, gp)
	}

	cr, err := cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "test_prompt_with_arguments"},
		Argument: mcp.CompleteParamsArgument{Name: "arg1", Value: "x"}})
	if err != nil || cr.Completion.Values == nil {
		t.Fatalf("completion: %v %+v", err, cr)
	}
}

// TestGuardsAreOn checks the fixture keeps the production guards: the
// dns-rebinding probe of the suite, by hand.
func TestGuardsAreOn(t *testing.T) {
	url := serve(t)
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`
	host := strings.TrimSuffix(strings.TrimPrefix(url, "http://"), kernel.MCPPath)
	for _, tc := range []struct {
		name, host, origin string
		want               int
	}{
		{"rebound host", "evil.example.com", "http://evil.example.com", http.StatusForbidden},
		{"foreign origin", host, "http://evil.example.com", http.StatusForbidden},
		{"own origin", host, "http://" + host, http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest("POST", url, strings.NewReader(init))
			req.Host = tc.host
			req.Header.Set("Origin", tc.origin)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Errorf("status %d, want %d", resp.StatusCode, tc.want)
			}
		})
	}
}

func TestMedia(t *testing.T) {
	if p := conformance.PNG(); !strings.HasPrefix(string(p), "\x89PNG\r\n\x1a\n") {
		t.Errorf("PNG: bad signature % x", p[:8])
	}
	if w := conformance.WAV(); len(w) != 46 || string(w[:4]) != "RIFF" || string(w[8:12]) != "WAVE" {
		t.Errorf("WAV: %d bytes % x", len(w), w[:12])
	}
}
