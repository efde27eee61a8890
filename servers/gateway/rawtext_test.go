package gateway

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// plainSeeds are answers at the edge of the plain grammar (rawtext.go):
// the fast path's, and the ones it must leave to segmentio.
var plainSeeds = []string{
	`{"jsonrpc":"2.0","id":"bulwark-gw-1","result":{"content":[{"type":"text","text":"hi"}],"resultType":"complete"}}`,
	`{"jsonrpc":"2.0","id":"bulwark-gw-1","result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}},"content":[{"type":"text","text":"hi"}],"resultType":"complete"}}`,
	` { "jsonrpc" : "2.0" ,	"id" : "x" , "result" : { "content" : [ { "text" : "a" , "type" : "text" } , {"type":"text"} ] , "isError" : true } } ` + "\r\n",
	`{"result":{"isError":false,"content":[]},"id":"","jsonrpc":"2.0"}`,
	`{"jsonrpc":"2.0","id":"x","result":{}}`,
	`{"jsonrpc":"2.0","id":"x","result":{"content":[{"type":"text","text":"é ☃ 𝄞"}]}}`,
	`{"jsonrpc":"2.0","id":"x","result":{"content":[{"type":"text","text":"\u00e9"}]}}`,
	`{"jsonrpc":"2.0","id":"x","result":{"content":[{"type":"text","text":"a\nb"}]}}`,
	"{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"a\nb\"}]}}",
	"{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"\xff\"}]}}",
	"{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"\xed\xa0\x80\"}]}}",
	`{"jsonrpc":"2.0","id":"x","result":{"content":[{"type":"text","text":"a","text":"b"}]}}`,
	`{"jsonrpc":"2.0","id":"x","result":{"content":[{"type":"text","type":"text"}]}}`,
	`{"jsonrpc":"2.0","id":"x","result":{"content":[],"content":[{"type":"text","text":"b"}]}}`,
	`{"jsonrpc":"2.0","id":"x","id":"y","result":{}}`,
	`{"jsonrpc":"2.0","id":"x","result":{},"result":{"content":[]}}`,
	`{"jsonrpc":"2.0","id":"x","result":{"content":[{"type":"Text","text":"a"}]}}`,
	`{"jsonrpc":"2.0","id":"x","result":{"Content":[{"type":"text","text":"a"}]}}`,
	`{"jsonrpc":"2.0","id":"x","result":{"content":[{"type":"text","text":"a","_meta":{}}]}}`,
	`{"jsonrpc":"2.0","id":"x","result":{"content":[{"type":"text","text":"a","annotations":{"priority":1}}]}}`,
	`{"jsonrpc":"2.0","id":"x","result":{"resultType":"input_required","content":[]}}`,
	`{"jsonrpc":"2.0","id":"x","result":{"resultType":"complete","resultType":"complete"}}`,
	`{"jsonrpc":"2.0","id":"x","result":{"isError":"true"}}`,
	`{"jsonrpc":"2.0","id":"x","result":{"isError":tru}}`,
	`{"jsonrpc":"2.0","id":"x","result":{"isError":truex}}`,
	`{"jsonrpc":"2.0","id":"x","result":{"_meta":null}}`,
	`{"jsonrpc":"2.0","id":"x","result":{"_meta":[]}}`,
	`{"jsonrpc":"2.0","id":"x","result":{"_meta":{"a":1}}}`,
	`{"jsonrpc":"2.0","id":"x","result":{"_meta":{"a":[null,true,false,{"b":"c"},[]],"a":"dup"}}}`,
	`{"jsonrpc":"2.0","id":"x","result":{"_meta":{"a":nul}}}`,
	`{"jsonrpc":"2.0","id":"x","result":{"_meta":` + strings.Repeat(`{"a":`, 20) + `{}` + strings.Repeat(`}`, 20) + `}}`,
	`{"jsonrpc":"2.0","id":"x","result":{"structuredContent":{"a":"b"},"content":[]}}`,
	`{"jsonrpc":"2.0","id":"x","result":{"content":[{"type":"text","text":"a"}]}} `,
	`{"jsonrpc":"2.0","id":"x","result":{"content":[{"type":"text","text":"a"}]}}x`,
	`{"jsonrpc":"2.0","id":"x","result":{"content":[{"type":"text","text":"a"}]}}{}`,
	`{"jsonrpc":"2.0","id":"x","result":{"content":[{"type":"text","text":"a"}]}`,
	`{"jsonrpc":"2.0","id":"x","result":{"content":[{"type":"text","text":"a"},]}}`,
	`{"jsonrpc":"2.0","id":"x","result":{"content":[{"type":"text","text":"a"}],}}`,
	`{"jsonrpc":"2.0","id":"x","result":{"content":[{"type":"text","text":"a"}]},"error":{"code":1,"message":"m"}}`,
	`{"jsonrpc":"2.0","id":"x","method":"m","result":{}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"a"}]}}`,
	`{"jsonrpc":"2.0","id":null,"result":{}}`,
	`{"jsonrpc":"2.0 ","id":"x","result":{}}`,
	`{"jsonrpc":"2.0","id":"x","result":null}`,
	`{"jsonrpc":"2.0","id":"x"}`,
	`{"id":"x","result":{}}`,
	"{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"" + strings.Repeat("y", 40) + "\x01" + strings.Repeat("y", 40) + "\"}]}}",
	"{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"" + strings.Repeat("y", 40) + "\xc3\xa9\xff" + strings.Repeat("y", 40) + "\"}]}}",
	`{"jsonrpc":"2.0","id":"x","result":{"content":[` + strings.Repeat(`{"type":"text","text":"t"},`, 8) + `{"type":"text","text":"9"}]}}`,
	`{"jsonrpc":"2.0","id":"x","result":{"content":[` + strings.Repeat(`{"type":"text","text":"t"},`, 7) + `{"type":"text","text":"8"}]}}`,
}

func init() { rawSeeds = append(rawSeeds, plainSeeds...) }

// TestPlainAnswersTakeTheFastPath: the answer a relayed call gets from a
// go-sdk server (a text result, its _meta and resultType) is read by the
// plain scanner, to what segmentio reads; what is outside the grammar is
// left to it.
func TestPlainAnswersTakeTheFastPath(t *testing.T) {
	for i, in := range plainSeeds[:6] {
		resp, ok := plainResponse([]byte(in))
		if !ok {
			t.Fatalf("%d %s: not read by the fast path", i, in)
		}
		if _, ok := plainResult(resp.Result); !ok {
			t.Fatalf("%d %s: result not read by the fast path", i, in)
		}
	}
	for _, in := range plainSeeds[8:] {
		in := []byte(in)
		if resp, ok := plainResponse(in); ok {
			if strings.Count(string(in), `"text":`) > maxPlainBlocks {
				t.Fatalf("%s: read more than %d blocks", in, maxPlainBlocks)
			}
			checkPlain(t, in, resp)
		}
	}
}

// checkPlain holds what the fast path read from in to what segmentio reads
// and what the go-sdk reads.
func checkPlain(t *testing.T, in []byte, resp *jsonrpc.Response) {
	t.Helper()
	want, err := jsonrpc.DecodeMessage(in)
	if err != nil {
		t.Fatalf("%q: fast path read %#v; the go-sdk refuses: %v", in, resp, err)
	}
	if !reflect.DeepEqual(want, resp) {
		t.Fatalf("%q:\ngo-sdk %#v\nfast   %#v", in, want, resp)
	}
	got, ok := plainResult(resp.Result)
	if !ok {
		t.Fatalf("%q: the fast path read the message but not its result", in)
	}
	slow, err := slowCallResult(resp.Result)
	if err != nil || !reflect.DeepEqual(slow, got) {
		t.Fatalf("%q:\nsegmentio %#v, %v\nfast      %#v", in, slow, err, got)
	}
	sdk := new(mcp.CallToolResult)
	if err := sdk.UnmarshalJSON(resp.Result); err != nil || !reflect.DeepEqual(sdk.Content, got.Content) || sdk.IsError != got.IsError {
		t.Fatalf("%q:\ngo-sdk %#v, %v\nfast   %#v", in, sdk, err, got)
	}
}

// FuzzPlainText: whatever the fast path reads, it reads as segmentio and
// the go-sdk read it.
func FuzzPlainText(f *testing.F) {
	for _, s := range rawSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		if resp, ok := plainResponse(in); ok {
			checkPlain(t, in, resp)
		}
		if res, ok := plainResult(in); ok {
			slow, err := slowCallResult(in)
			if err != nil || !reflect.DeepEqual(slow, res) {
				t.Fatalf("%q:\nsegmentio %#v, %v\nfast      %#v", in, slow, err, res)
			}
		}
	})
}

// BenchmarkDecodeAnswer: the read loop's decoding of a relayed call's
// answer (a go-sdk server's 1 KB text result) and of its result, by the
// plain scanner and by segmentio.
func BenchmarkDecodeAnswer(b *testing.B) {
	line := []byte(`{"jsonrpc":"2.0","id":"bulwark-gw-12345","result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"fake","version":"v1.0.0"}},"content":[{"type":"text","text":"` +
		strings.Repeat("x", 1024) + `"}],"resultType":"complete"}}`)
	for _, c := range []struct {
		name   string
		msg    func([]byte) (jsonrpc.Message, error)
		result func(json.RawMessage) (*mcp.CallToolResult, error)
	}{{"plain", decodeMessage, decodeCheckedCallResult}, {"segmentio", slowMessage, slowCallResult}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				m, err := c.msg(line)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := c.result(m.(*jsonrpc.Response).Result); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestPlainBytes: the word-at-a-time check finds a control character or a
// non-ASCII byte at every position of strings of every length around its
// 8- and 32-byte steps.
func TestPlainBytes(t *testing.T) {
	ref := func(v []byte) (ascii, ok bool) {
		ascii = true
		for _, c := range v {
			if c < 0x20 {
				return false, false
			}
			if c >= 0x80 {
				ascii = false
			}
		}
		return ascii, true
	}
	for n := range 80 {
		for i := range n {
			for _, c := range []byte{0x00, 0x1f, 0x20, 0x21, 0x7e, 0x7f, 0x80, 0xc3, 0xff} {
				v := []byte(strings.Repeat("a", n))
				v[i] = c
				a, ok := plainBytes(v)
				ra, rok := ref(v)
				if a != ra || ok != rok {
					t.Fatalf("len %d, %#x at %d: ascii %v ok %v, want %v %v", n, c, i, a, ok, ra, rok)
				}
			}
		}
	}
}
