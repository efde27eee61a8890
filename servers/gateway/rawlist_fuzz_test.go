package gateway

import (
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// FuzzRawTools: a raw tools/list result from a hostile upstream never
// panics the split, and a split that succeeds has one slot per decoded tool,
// each a valid JSON value or nil; each slot is the object the go-sdk
// decoded as the tool in its place (its members matched as the go-sdk
// matches them, so "TOOLS" or "NAME" members change nothing).
func FuzzRawTools(f *testing.F) {
	f.Add([]byte(`{"tools":[{"name":"a","inputSchema":{"type":"object"}},{"name":"b","x-extra":1}]}`), 2)
	f.Add([]byte(`{"tools":[]}`), 0)
	f.Add([]byte(`{"tools":null,"nextCursor":"x"}`), 1)
	f.Add([]byte(`{"tools":[{"name":"a"}],"tools":[{"name":"b"}]}`), 1)
	f.Add([]byte(`[`), 1)
	f.Add([]byte(`{"tools":[{"name":"a"}],"TOOLS":[{"name":"b"}]}`), 1)
	f.Add([]byte(`{"tools":[{"name":"a","NAME":"b","inputSchema":{"type":"object"}}]}`), 1)
	f.Fuzz(func(t *testing.T, raw []byte, n int) {
		if n < 0 || n > 64 {
			return
		}
		out, err := rawTools(raw, n)
		if err != nil {
			return
		}
		if len(out) != n {
			t.Fatalf("%d slots for %d tools", len(out), n)
		}
		var decoded mcp.ListToolsResult // as the go-sdk's client decodes it
		sdk := sdkUnmarshal(raw, &decoded) == nil && len(decoded.Tools) == n
		for i, o := range out {
			if o != nil && !json.Valid(o) {
				t.Fatalf("invalid slot %q", o)
			}
			if o != nil && sdk && decoded.Tools[i] != nil && !sameName(o, decoded.Tools[i].Name) {
				t.Fatalf("slot %d %q is not the tool the go-sdk decoded, %q", i, o, decoded.Tools[i].Name)
			}
		}
	})
}
