package httpguard

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sdkHandler is the go-sdk's stateless Streamable HTTP handler serving one
// "echo" tool, configured as the kernel uses it behind the pipeline.
func sdkHandler(t testing.TB) http.Handler {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "guard-test", Version: "1"}, nil)
	type in struct {
		Text string `json:"text"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "echo"}, func(ctx context.Context, req *mcp.CallToolRequest, args in) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: args.Text}}}, nil, nil
	})
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s },
		&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true, DisableLocalhostProtection: true})
}

const modernEchoCall = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},` +
	`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`

// TestSDKAcceptsBase64NameBehindPipeline shows the go-sdk gap and the fix:
// alone, the SDK rejects a correct Base64-sentinel Mcp-Name (it compares the
// raw value); behind headerAgreement the same request is served.
func TestSDKAcceptsBase64NameBehindPipeline(t *testing.T) {
	pipe, err := NewPipeline(nil)
	if err != nil {
		t.Fatal(err)
	}
	bare := serve(t, sdkHandler(t))
	guarded := serve(t, pipe.Handler(sdkHandler(t)))
	headers := func(name string) map[string]string {
		return map[string]string{
			"Content-Type": "application/json", "Accept": acceptBoth,
			"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": name,
		}
	}
	const b64 = "=?base64?ZWNobw==?=" // "echo"
	tests := []struct {
		name      string
		guarded   bool
		mcpName   string
		status    int
		wantInOut string
	}{
		{"bare SDK, plain name", false, "echo", 200, `"text":"hi"`},
		{"bare SDK, base64 name (the gap)", false, b64, 400, "-32020"},
		{"pipeline, plain name", true, "echo", 200, `"text":"hi"`},
		{"pipeline, base64 name", true, b64, 200, `"text":"hi"`},
		{"pipeline, wrong name", true, "other", 400, `"header_mismatch"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := bare
			if tt.guarded {
				srv = guarded
			}
			got := send(t, srv, wireReq{headers: headers(tt.mcpName), body: modernEchoCall})
			if got.status != tt.status || !strings.Contains(got.body, tt.wantInOut) {
				t.Fatalf("status %d body %s; want %d containing %s", got.status, got.body, tt.status, tt.wantInOut)
			}
		})
	}
}
