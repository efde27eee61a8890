package rustpad_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/mcptest"
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
