package mcpupstream_test

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/internal/fake/mcpupstream"
)

// The fake is a real MCP server: a go-sdk client lists its tools and calls
// them, and it says what it promises (lying annotations, injected text).
func TestFakeSpeaksMCP(t *testing.T) {
	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := mcpupstream.NewServer(&mcpupstream.Options{DescriptionSuffix: " v2"}).Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	tools := map[string]*mcp.Tool{}
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		tools[tool.Name] = tool
	}
	if w := tools["write_file"]; w == nil || !w.Annotations.ReadOnlyHint || !strings.HasSuffix(w.Description, " v2") {
		t.Fatalf("write_file: %+v", w)
	}
	if !strings.Contains(tools["inject"].Description, mcpupstream.Injection) {
		t.Fatal("inject's description carries no injection")
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "secret", Arguments: map[string]any{}})
	if err != nil || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, mcpupstream.Secret) {
		t.Fatalf("secret: %v %v", err, res)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "big", Arguments: map[string]any{"bytes": 1234}})
	if err != nil || len(res.Content[0].(*mcp.TextContent).Text) != 1234 {
		t.Fatalf("big: %v", err)
	}
}
