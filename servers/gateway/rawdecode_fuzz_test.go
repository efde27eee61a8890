package gateway

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// rawSeeds are messages and results an upstream writes, and hostile ones.
var rawSeeds = []string{
	`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hi"}]}}`,
	`{"jsonrpc":"2.0","id":"bulwark-gw-1","result":{"content":[{"type":"text","text":"x","_meta":{"a":1}}],"isError":true,"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}}}}`,
	`{"jsonrpc":"2.0","id":"bulwark-gw-2","error":{"code":-32602,"message":"bad","data":{"x":1}}}`,
	`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1}}`,
	`{"jsonrpc":"2.0","id":3,"method":"ping"}`,
	`{"jsonrpc":"1.0","id":1,"result":{}}`,
	`{"jsonrpc":"2.0","id":null,"result":{}}`,
	`{"jsonrpc":"2.0","id":{},"result":{}}`,
	`{"jsonrpc":"2.0","ID":1,"Result":{}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"Content":[{"type":"text","text":"case"}]}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"image","mimeType":"image/png","data":"AAEC"},{"type":"audio","mimeType":"audio/wav","data":"AA=="}]}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"image","data":"not base64!"}]}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"resource","resource":{"uri":"file:///a","text":"t","blob":"AA=="}}]}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"resource_link","uri":"file:///a","name":"a","size":3,"icons":[{"src":"x"}]}]}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"tool_result","toolUseId":"u","content":[{"type":"tool_use"}]}]}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"tool_use","id":"u","name":"n","input":{"a":[1,2]}}]}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"content":[null]}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"video"}]}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"content":"text"}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"structuredContent":{"a":[1,"b",null,true]},"content":[]}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"structuredContent":7}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"inputRequests":{"q":{"method":"elicitation/create","params":{"message":"m","requestedSchema":{"type":"object"}}}},"requestState":"s","resultType":"input_required"}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"inputRequests":{"q":{"method":"roots/list"}}}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"inputRequests":{"q":{"method":"nope"}}}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"inputRequests":{}}}`,
	`{"jsonrpc":"2.0","id":1,"result":null}`,
	`{"jsonrpc":"2.0","id":1,"result":[]}`,
	`{"jsonrpc":"2.0","id":1}`,
	`{"jsonrpc":"2.0","id":1,"result":{"isError":"yes"}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"a","text":"b"}]}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"\ud800 \u00e9 \xff"}]}}`,
	`{"jsonrpc":"2.0","id":1,"result":{}} trailing`,
	`{"jsonrpc":"2.0","id":1.5,"result":{}}`,
	`{"jsonrpc":"2.0","id":1e3,"result":{}}`,
	`{"jsonrpc":"2.0","method":"","id":1}`,
	`{"jsonrpc":"2.0","method":5}`,
	`[{"jsonrpc":"2.0","id":1,"result":{}}]`,
	`{"jsonrpc":"2.0","id":1,"result":{"content":[` + deep(1200) + `]}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"structuredContent":` + deep(998) + `}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"_meta":null,"content":null}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"_meta":{"a":1e400},"content":[]}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"_meta":{"a":["1e400",-1e999]},"content":[]}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"_meta":{"a\"1e400":{"b":[true,null,"\\"]}},"content":[]}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"_meta":"m","content":[]}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"_meta":[],"content":[]}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"_meta":true}}`,
	``, `   `, `nul`, `{`,
}

func deep(n int) string {
	b := make([]byte, 0, 2*n)
	for range n {
		b = append(b, '[')
	}
	for range n {
		b = append(b, ']')
	}
	return string(b)
}

// FuzzDecodeMessage: decodeMessage gives what jsonrpc.DecodeMessage gives,
// or both refuse.
func FuzzDecodeMessage(f *testing.F) {
	for _, s := range rawSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		want, werr := jsonrpc.DecodeMessage(data)
		got, gerr := decodeMessage(data)
		if (werr == nil) != (gerr == nil) {
			t.Fatalf("%q: go-sdk error %v, ours %v", data, werr, gerr)
		}
		if werr == nil && !reflect.DeepEqual(want, got) {
			t.Fatalf("%q:\ngo-sdk %#v\nours   %#v", data, want, got)
		}
		// a decoded response's result needs no second nesting check
		if r, ok := got.(*jsonrpc.Response); ok && r.Result != nil {
			full, ferr := decodeCallResult(r.Result)
			checked, cerr := decodeCheckedCallResult(r.Result)
			if (ferr == nil) != (cerr == nil) || ferr == nil && !reflect.DeepEqual(full, checked) {
				t.Fatalf("%q: checked decoding %#v, %v; full %#v, %v", data, checked, cerr, full, ferr)
			}
		}
	})
}

// FuzzDecodeCallResult: decodeCallResult gives what the go-sdk's
// CallToolResult decoding gives (every exported field but _meta, which it
// leaves out), or both refuse.
func FuzzDecodeCallResult(f *testing.F) {
	for _, s := range rawSeeds {
		if m, err := jsonrpc.DecodeMessage([]byte(s)); err == nil {
			if r, ok := m.(*jsonrpc.Response); ok {
				f.Add([]byte(r.Result))
			}
		}
	}
	f.Add([]byte(`{"content":[{"type":"text","text":"x"}]}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		want := new(mcp.CallToolResult)
		werr, ok := sdkCallResult(raw, want)
		if !ok {
			return
		}
		got, gerr := decodeCallResult(raw)
		if (werr == nil) != (gerr == nil) {
			t.Fatalf("%q: go-sdk error %v, ours %v", raw, werr, gerr)
		}
		if werr != nil {
			return
		}
		if got.Meta != nil || !reflect.DeepEqual(want.Content, got.Content) ||
			!reflect.DeepEqual(want.StructuredContent, got.StructuredContent) || want.IsError != got.IsError ||
			!reflect.DeepEqual(want.InputRequests, got.InputRequests) || want.RequestState != got.RequestState {
			t.Fatalf("%q:\ngo-sdk %#v\nours   %#v", raw, want, got)
		}
	})
}

// sdkCallResult is how the go-sdk's client decodes a tools/call result
// object: its internal json.Unmarshal into *CallToolResult runs
// CallToolResult.UnmarshalJSON. ok is false for what is not one JSON
// object: the message decoder hands on only one JSON value, and for
// anything but an object decodeCallResult makes the go-sdk's own call.
func sdkCallResult(raw []byte, res *mcp.CallToolResult) (err error, ok bool) {
	t := bytes.TrimLeft(raw, " \t\r\n")
	if !json.Valid(raw) || len(t) == 0 || t[0] != '{' {
		return nil, false
	}
	if err := checkDepth(raw); err != nil {
		return err, true
	}
	return res.UnmarshalJSON(raw), true
}

// The read loop reuses its line buffer: what decodeMessage returns must
// not alias it.
func TestDecodeMessageCopies(t *testing.T) {
	for _, in := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hello"}]}}`,
		`{"jsonrpc":"2.0","id":2,"method":"notifications/progress","params":{"progressToken":"t","message":"hello"}}`,
		`{"jsonrpc":"2.0","id":3,"error":{"code":1,"message":"hello","data":{"x":"hello"}}}`,
	} {
		line := []byte(in)
		m, err := decodeMessage(line)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := jsonrpc.EncodeMessage(m)
		for i := range line {
			line[i] = 'X'
		}
		if got, _ := jsonrpc.EncodeMessage(m); !bytes.Equal(got, want) {
			t.Fatalf("the decoded message changed with its input: %s, was %s", got, want)
		}
	}
}

// checkDepthBytes is the go-sdk's checkMaxDepth loop, byte by byte: the
// reference for checkDepth.
func checkDepthBytes(data []byte) error {
	depth := 0
	inString, escaped := false, false
	for _, b := range data {
		if inString {
			switch {
			case escaped:
				escaped = false
			case b == '\\':
				escaped = true
			case b == '"':
				inString = false
			}
			continue
		}
		switch b {
		case '"':
			inString = true
		case '{', '[':
			if depth++; depth > sdkMaxDepth {
				return errMaxDepth
			}
		case '}', ']':
			if depth > 0 {
				depth--
			}
		}
	}
	return nil
}

// FuzzCheckDepth: checkDepth refuses exactly what the go-sdk's loop
// refuses, on any bytes (the seeds, and strings of quotes, backslashes and
// brackets around the cap).
func FuzzCheckDepth(f *testing.F) {
	for _, s := range rawSeeds {
		f.Add([]byte(s))
	}
	f.Add([]byte(`"\\"` + deep(1001)))
	f.Add([]byte(`"\\\"` + deep(1001) + `"`))
	f.Add([]byte(`["\"[[[","\\",` + deep(999) + `]`))
	f.Add([]byte(`"unterminated \"` + deep(1001)))
	f.Fuzz(func(t *testing.T, data []byte) {
		if got, want := checkDepth(data), checkDepthBytes(data); got != want {
			t.Fatalf("%q: checkDepth %v, the go-sdk's loop %v", data, got, want)
		}
		if len(data) > 0 { // the same just under and over the cap
			deepened := append([]byte(deep(sdkMaxDepth)[:sdkMaxDepth-1]), data...)
			if got, want := checkDepth(deepened), checkDepthBytes(deepened); got != want {
				t.Fatalf("%q after %d brackets: checkDepth %v, the go-sdk's loop %v", data, sdkMaxDepth-1, got, want)
			}
		}
	})
}
