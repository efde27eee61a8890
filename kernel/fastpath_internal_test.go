package kernel

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sdkEncoding is a result as the go-sdk's path writes it: its MarshalJSON
// through the wire encoder.
func sdkEncoding(t testing.TB, res *mcp.CallToolResult) string {
	t.Helper()
	b, err := marshalWire(res)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// appendOnly is appendCallResult after a prefix, as writeFast uses it.
func appendOnly(t testing.TB, res *mcp.CallToolResult) string {
	t.Helper()
	const prefix = `{"jsonrpc":"2.0","id":1,"result":`
	b, err := appendCallResult([]byte(prefix), res)
	if err != nil {
		t.Fatal(err)
	}
	if string(b[:len(prefix)]) != prefix {
		t.Fatalf("the prefix was overwritten: %s", b)
	}
	return string(b[len(prefix):])
}

// testImpl is a server identity with characters encoding/json escapes.
var testImpl = &mcp.Implementation{Name: "bulwark <&>", Title: "t\u2028", Version: "v1"}

// appendWithInfo is appendCallResultInfo with testImpl, which must leave
// res unchanged.
func appendWithInfo(t testing.TB, res *mcp.CallToolResult) string {
	t.Helper()
	before := sdkEncoding(t, res)
	info, err := json.Marshal(testImpl)
	if err != nil {
		t.Fatal(err)
	}
	b, err := appendCallResultInfo([]byte("x"), res, info, testImpl)
	if err != nil {
		t.Fatal(err)
	}
	if after := sdkEncoding(t, res); after != before {
		t.Fatalf("the result was changed: %s, was %s", after, before)
	}
	return string(b[1:])
}

// hostileText holds every class of character encoding/json escapes.
const hostileText = "<script>&amp;</script> \"q\" \\ \b\f\n\r\t \x00\x01\x1f\x7f \u2028\u2029 \u202e\u200b é 😀 \xff\xfe \xed\xa0\x80"

// TestAppendCallResult: the fast path's encoder writes every shape of
// result byte for byte as the go-sdk does (a wrong escape, field order or
// omitted member would fail here).
func TestAppendCallResult(t *testing.T) {
	untrustedMeta := func(src string) mcp.Meta {
		return mcp.Meta{"bulwark/untrusted": map[string]any{"source": src}}
	}
	ann := &mcp.Annotations{Priority: 0.5}
	for name, res := range map[string]*mcp.CallToolResult{
		"empty":                 {},
		"empty content":         {Content: []mcp.Content{}},
		"kernel shape":          {Meta: untrustedMeta("upstream"), Content: []mcp.Content{&mcp.TextContent{Text: "<untrusted-data>\n{}\n</untrusted-data>"}}, StructuredContent: json.RawMessage(`{"a":"<b>"}`)},
		"hostile text":          {Content: []mcp.Content{&mcp.TextContent{Text: hostileText}}},
		"hostile source":        {Meta: untrustedMeta(hostileText), Content: []mcp.Content{}},
		"empty text":            {Content: []mcp.Content{&mcp.TextContent{}}},
		"two texts":             {Content: []mcp.Content{&mcp.TextContent{Text: "a"}, &mcp.TextContent{Text: "b"}}},
		"text with meta":        {Content: []mcp.Content{&mcp.TextContent{Text: "a", Meta: mcp.Meta{"k": "<v>"}}}},
		"text with annotations": {Content: []mcp.Content{&mcp.TextContent{Text: "a", Annotations: ann}}},
		"image":                 {Content: []mcp.Content{&mcp.ImageContent{Data: []byte("\x00\xff"), MIMEType: "image/png"}}},
		"nil content":           {Content: []mcp.Content{nil}},
		"other meta":            {Meta: mcp.Meta{"z": 1, "a": []any{"<", nil}, "bulwark/untrusted": map[string]any{"source": "s"}}},
		"untrusted meta, more":  {Meta: mcp.Meta{"bulwark/untrusted": map[string]any{"source": "s", "x": 1}}},
		"untrusted meta, other": {Meta: mcp.Meta{"bulwark/untrusted": map[string]any{"source": 5}}},
		"server info":           {Meta: mcp.Meta{mcp.MetaKeyServerInfo: &mcp.Implementation{Name: "n<", Version: "v"}}},
		"spaced raw structured": {StructuredContent: json.RawMessage("{ \"a\" : [ 1 , \"\u2028&\" ] }")},
		"nil raw structured":    {StructuredContent: json.RawMessage(nil)},
		"compact raw, spaces and escapes in strings": {StructuredContent: json.RawMessage(`{"a":"x y\\\"z","b":[1,-2.5e3,true,null,{}]}`)},
		"compact raw, html after an escaped quote":   {StructuredContent: json.RawMessage(`{"a":"\"<","b":"\\\\"}`)},
		"compact raw, U+2028 in a string":            {StructuredContent: json.RawMessage("{\"a\":\"\u2028\"}")},
		"compact raw, top-level string":              {StructuredContent: json.RawMessage(`"s p"`)},
		"map structured":                             {StructuredContent: map[string]any{"b": 1, "a": "<"}},
		"error":                                      {IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "failed"}}, StructuredContent: map[string]any{"error": map[string]any{"code": "x"}}},
		"request state":                              {RequestState: "s", Content: []mcp.Content{}},
		"input requests":                             {InputRequests: mcp.InputRequestMap{}, Content: []mcp.Content{}},
	} {
		t.Run(name, func(t *testing.T) {
			if want, got := sdkEncoding(t, res), appendOnly(t, res); got != want {
				t.Fatalf("fast encoding differs from the go-sdk's\nsdk:  %s\nfast: %s", want, got)
			}
			// with the server's identity added, as for 2026-07-28
			if _, ok := res.Meta[mcp.MetaKeyServerInfo]; !ok {
				if want, got := sdkEncoding(t, withServerInfo(res, testImpl)), appendWithInfo(t, res); got != want {
					t.Fatalf("fast encoding with the server's identity differs from the go-sdk's\nsdk:  %s\nfast: %s", want, got)
				}
			}
		})
	}
	// A structured content the go-sdk cannot encode fails both.
	bad := &mcp.CallToolResult{Content: []mcp.Content{}, StructuredContent: json.RawMessage(`{`)}
	if _, err := marshalWire(bad); err == nil {
		t.Fatal("the go-sdk encoded invalid JSON")
	}
	if _, err := appendCallResult(nil, bad); err == nil {
		t.Fatal("the fast encoder encoded invalid JSON")
	}
}

// FuzzAppendCallResult: any text, source, structured JSON and error flag
// encode as the go-sdk encodes them.
func FuzzAppendCallResult(f *testing.F) {
	f.Add(hostileText, "upstream", `{"a":"<b>"}`, false)
	f.Add("", "", `{ "x" : [1, 2.50, "\u2028"] }`, true)
	f.Add("\xff", "\u2029", `[]`, false)
	f.Fuzz(func(t *testing.T, text, source, structured string, isError bool) {
		res := &mcp.CallToolResult{
			Meta:    mcp.Meta{"bulwark/untrusted": map[string]any{"source": source}},
			Content: []mcp.Content{&mcp.TextContent{Text: text}, &mcp.TextContent{Text: source}},
			IsError: isError,
		}
		if json.Valid([]byte(structured)) {
			res.StructuredContent = json.RawMessage(structured)
		}
		if want, got := sdkEncoding(t, res), appendOnly(t, res); got != want {
			t.Fatalf("fast encoding differs from the go-sdk's\nsdk:  %s\nfast: %s", want, got)
		}
		if want, got := sdkEncoding(t, withServerInfo(res, testImpl)), appendWithInfo(t, res); got != want {
			t.Fatalf("fast encoding with the server's identity differs from the go-sdk's\nsdk:  %s\nfast: %s", want, got)
		}
	})
}

// FuzzValidJSON: validJSON (the kernel's grammar) accepts only what
// json.Valid accepts, so that appendCallResult never copies bytes
// encoding/json would refuse, and accepts all of it but for nesting deeper
// than jsonscan's cap (then the value goes through encoding/json: the same
// bytes, more slowly).
func FuzzValidJSON(f *testing.F) {
	for _, s := range []string{`{"a":"<b>"}`, `{ "x" : [1, 2.50, "\u2028"] }`, `[]`, `{"a":1,}`, `"\ud800"`, "\"\xff\"", `01`, `1e`, `-`, `{"a" 1}`, `nul`, `[1 2]`, ` {} `, `{}x`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, want := validJSON([]byte(s)), json.Valid([]byte(s))
		if got && !want {
			t.Fatalf("validJSON accepts %q, which json.Valid refuses", s)
		}
		if want && !got && strings.Count(s, "[")+strings.Count(s, "{") < 1000 {
			t.Fatalf("validJSON refuses %q, which json.Valid accepts", s)
		}
	})
}

// TestWireID: the id as the go-sdk writes it back, the integer re-encoded
// (returned as it is when it is already written so).
func TestWireID(t *testing.T) {
	old := func(raw []byte) ([]byte, bool) { // before: a new encoding of every number
		n, err := strconv.ParseInt(string(raw), 10, 64)
		return strconv.AppendInt(nil, n, 10), err == nil
	}
	for _, id := range []string{`7`, `0`, `-12`, `9007199254740993`, `-9223372036854775808`, `9223372036854775807`, `007`, `+1`, `-0`, `1.5`, `1e3`, `99999999999999999999`} {
		got, gotOK := wireID(json.RawMessage(id))
		want, wantOK := old([]byte(id))
		if gotOK != wantOK || gotOK && string(got) != string(want) {
			t.Errorf("wireID(%s) = %s, %v; want %s, %v", id, got, gotOK, want, wantOK)
		}
	}
	if got, ok := wireID(json.RawMessage(`"a\u0041"`)); !ok || string(got) != `"aA"` {
		t.Errorf("wireID of a string = %s, %v", got, ok)
	}
}
