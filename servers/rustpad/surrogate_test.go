package rustpad_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/mcptest"
	"github.com/bulwarkmcp/bulwark/kernel/untrusted"
	"github.com/bulwarkmcp/bulwark/servers/rustpad/ot"
)

// A lone surrogate escape in the text is refused with a clear validation
// error, never written as U+FFFD without a word (issue 10.12); a proper
// surrogate pair is a character and is written.
func TestLoneSurrogateIsRefused(t *testing.T) {
	f := newFixture(t, setup{})
	seed(t, f, "pad", "hello")
	call := func(raw string) *mcp.CallToolResult {
		res, err := f.sess.CallTool(context.Background(), &mcp.CallToolParams{Name: "append_to_document", Arguments: json.RawMessage(raw)})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	for _, raw := range []string{`{"id":"pad","text":" a\ud800b"}`, `{"id":"pad","text":"\udc00"}`, `{"id":"pad","text":"\uD83C"}`} {
		res := call(raw)
		text := isError(t, res, kernel.InvalidArgument)
		contains(t, text, "lone UTF-16 surrogate")
	}
	if got := f.peer.Text("pad"); got != "hello" {
		t.Fatalf("pad %q", got)
	}
	if res := call(`{"id":"pad","text":" \ud83c\udf89"}`); res.IsError {
		t.Fatal(mcptest.Text(res))
	}
	if got := f.peer.Text("pad"); got != "hello 🎉" {
		t.Fatalf("pad %q", got)
	}
}

// ot keeps its own lone-surrogate scanner (it imports nothing of ours, and
// the fake peer uses it); it must agree with the kernel's, which refuses
// tool arguments.
func FuzzLoneSurrogateScannersAgree(f *testing.F) {
	for _, s := range []string{`"a\ud800b"`, `"\ud83c\udf89"`, `"\\ud800"`, `"\udc00\ud800"`, `"\uD83C\uDF8"`, `"\u12"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if a, b := ot.HasLoneSurrogate(raw), untrusted.HasLoneSurrogate(raw); a != b {
			t.Fatalf("%q: ot %v, kernel %v", raw, a, b)
		}
	})
}
