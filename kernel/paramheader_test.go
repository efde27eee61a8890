package kernel_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/mcptest"
)

// TestParamHeaderRequiredOnFastPath: a 2026-07-28 call of a tool with an
// x-mcp-header parameter that omits the Mcp-Param-* header is refused
// (400, -32020) with the fast path on, as the go-sdk refuses it: the fast
// path used to answer it, since it saw no Mcp-Param-* header to defer on
// (the 2 checks of http-custom-header-server-validation the fixture lost).
func TestParamHeaderRequiredOnFastPath(t *testing.T) {
	var s jsonschema.Schema
	if err := json.Unmarshal([]byte(`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}`), &s); err != nil {
		t.Fatal(err)
	}
	tool := kernel.NewDynamicTool(kernel.DynamicSpec{Name: "mirror", Description: "Mirrors region.", Policy: readPolicy, Schema: &s,
		Handle: func(context.Context, *kernel.Call, json.RawMessage) (any, error) { return kernel.Text("ran"), nil }})
	srv, err := kernel.New(kernel.Info{Name: "t"}, []kernel.Tool{tool}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, disable := range []bool{false, true} {
		endpoint := mcptest.ServeHTTP(t, srv, kernel.HTTPOptions{DisableFastPath: disable})
		params := map[string]any{"name": "mirror", "arguments": map[string]any{"region": "eu"}, "_meta": meta2026(map[string]any{}, nil)}
		resp, body := post2026(t, endpoint, "tools/call", "mirror", params)
		if resp.StatusCode != 400 || !strings.Contains(body, "-32020") || strings.Contains(body, "ran") {
			t.Fatalf("fast path off %v: %d %s", disable, resp.StatusCode, body)
		}
	}
}
