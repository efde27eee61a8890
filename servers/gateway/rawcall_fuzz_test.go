package gateway

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// FuzzAppendCall: the request bytes appendCall builds by appending are the
// bytes marshalCall (encoding/json, the way they were built before) writes,
// for any valid arguments, tool name, _meta and go-sdk members (sdk: the
// members of a tools/list request's _meta, as the go-sdk would send them).
func FuzzAppendCall(f *testing.F) {
	sdk := `"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"bulwark-gateway","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}`
	for _, s := range []struct {
		id, name, args, k1, v1, k2, v2, sdk string
		meta                                bool
	}{
		{"bulwark-gw-1", "echo", `{"text":"hello"}`, "progressToken", "bulwark-1", "io.modelcontextprotocol/logLevel", "info", "", true},
		{"bulwark-gw-2", "echo", `{"text":"hello"}`, "io.modelcontextprotocol/logLevel", "info", "", "", sdk, true},
		{"bulwark-gw-3", "echo", `{"text":"<b>&amp;</b>\u2028"}`, "", "", "", "", sdk, false},
		{"bulwark-gw-4", "n", `{ "a" : [1, 2] }`, "", "", "", "", "", true},
		{"bulwark-gw-5", "n<", `null`, "x\"", "y\\", "", "", `"a":"<"`, true},
		{"bulwark-gw-6", "n", ``, "", "", "", "", `"a" : 1`, false},
		{"bulwark-gw-7", "é", `"\u00e9 \\\" x"`, "k", "\u2028", "", "", "", true},
		{"bulwark-gw-8", "n", "[\"\xe2\x80\xa8\",\"\xe2\x82\xac\"]", "", "", "", "", "", false},
	} {
		f.Add(s.id, s.name, s.args, s.k1, s.v1, s.k2, s.v2, s.sdk, s.meta)
	}
	f.Fuzz(func(t *testing.T, id, name, args, k1, v1, k2, v2, sdk string, meta bool) {
		if args != "" && !json.Valid([]byte(args)) {
			t.Skip() // appendCall's arguments are the kernel's, valid JSON
		}
		// The go-sdk's members, as sdkMeta takes them from its tools/list.
		sdkm := *sdkMeta(json.RawMessage(`{"_meta":{` + sdk + `}}`))
		p := &mcp.CallToolParams{Name: name, Arguments: json.RawMessage(args)}
		if meta {
			p.Meta = mcp.Meta{}
			if k1 != "" {
				p.Meta[k1] = v1
			}
			if k2 != "" {
				p.Meta[k2] = v2
			}
		}
		want, werr := marshalCall([]byte("x"), id, sdkm, p)
		got, gerr := appendCall([]byte("x"), id, sdkm, p)
		if (werr != nil) != (gerr != nil) {
			t.Fatalf("errors differ: marshal %v, append %v", werr, gerr)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("bytes differ:\n append  %s\n marshal %s", got, want)
		}
	})
}

// TestAppendCallAppends: a call as the gateway relays it (the kernel's
// compact arguments, string _meta, the go-sdk's members) is built without
// encoding/json: no allocation once the buffer is large enough.
func TestAppendCallAppends(t *testing.T) {
	args := json.RawMessage(`{"text":"` + string(bytes.Repeat([]byte("a"), 1024)) + `"}`)
	sdk := []byte(`"io.modelcontextprotocol/protocolVersion":"2026-07-28"`)
	p := &mcp.CallToolParams{Name: "echo", Arguments: args, Meta: mcp.Meta{"progressToken": "bulwark-1", mcp.MetaKeyLogLevel: "info"}}
	buf := make([]byte, 0, 4096)
	if n := testing.AllocsPerRun(100, func() {
		if _, err := appendCall(buf, "bulwark-gw-1", sdk, p); err != nil {
			t.Fatal(err)
		}
	}); n > 0 {
		t.Fatalf("appendCall allocated %v times per call", n)
	}
}
