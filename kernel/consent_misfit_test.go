package kernel_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/audit"
)

// rawClient is a 2025-11-25 client on the wire: it answers the server's
// requests with whatever the test writes, unchecked, as a hostile or buggy
// client would (the go-sdk client checks an elicitation's answer against
// its form before sending it).
type rawClient struct {
	t     *testing.T
	write func(string)
	read  func() string
}

// newRawClient connects in process (stdio false) or over stdio on pipes,
// the fast path on, as `bulwark` serves its client.
func newRawClient(t *testing.T, srv *kernel.Server, stdio bool) *rawClient {
	t.Helper()
	c := &rawClient{t: t}
	if stdio {
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		ctx, cancel := context.WithCancel(context.Background())
		go func() { _ = srv.ServeStdioWith(ctx, inR, outW, kernel.StdioOptions{}) }()
		t.Cleanup(func() { cancel(); inW.Close(); outR.Close() })
		out := bufio.NewReader(outR)
		c.write = func(s string) {
			if _, err := io.WriteString(inW, s+"\n"); err != nil {
				t.Fatal(err)
			}
		}
		c.read = func() string {
			line, err := out.ReadString('\n')
			if err != nil {
				t.Fatal(err)
			}
			return strings.TrimSpace(line)
		}
	} else {
		ct, st := mcp.NewInMemoryTransports()
		ss, err := srv.Connect(context.Background(), st, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ss.Close() })
		conn, err := ct.Connect(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		c.write = func(s string) {
			msg, err := jsonrpc.DecodeMessage([]byte(s))
			if err != nil {
				t.Fatal(err)
			}
			if err := conn.Write(context.Background(), msg); err != nil {
				t.Fatal(err)
			}
		}
		c.read = func() string {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			msg, err := conn.Read(ctx)
			if err != nil {
				t.Fatal(err)
			}
			b, err := jsonrpc.EncodeMessage(msg)
			if err != nil {
				t.Fatal(err)
			}
			return string(b)
		}
	}
	c.write(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{"form":{}}},"clientInfo":{"name":"raw","version":"0"}}}`)
	c.read()
	c.write(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return c
}

// TestWrongAnswerIsAToolError: an answer that does not fit the consent
// form (or a handler's form), or an error instead of an answer, ends the
// call with a tool error saying so — confirmation_declined for the consent
// — never a JSON-RPC error, and nothing runs. Over a 2025-11-25 session
// (the server asks with elicitation/create) and on 2026-07-28
// (input_required, the answer in inputResponses). Without answerMiddleware the
// session cases end with a JSON-RPC error of code 0.
func TestWrongAnswerIsAToolError(t *testing.T) {
	const misfit = "did not fit"
	for _, c := range []struct{ name, tool, answer, code string }{
		{"a box that is not a boolean", "delete_item", `"result":{"action":"accept","content":{"confirm":"yes"}}`, "confirmation_declined"},
		{"no box", "delete_item", `"result":{"action":"accept","content":{}}`, "confirmation_declined"},
		{"another action", "delete_item", `"result":{"action":"maybe"}`, "confirmation_declined"},
		{"an error instead of an answer", "delete_item", `"error":{"code":-32602,"message":"no"}`, "confirmation_declined"},
		{"a handler's form, a name that is not a string", "ask_name", `"result":{"action":"accept","content":{"name":5}}`, "failed_precondition"},
	} {
		for _, stdio := range []bool{false, true} {
			t.Run(fmt.Sprintf("session/stdio=%v/%s", stdio, c.name), func(t *testing.T) {
				f := newMRTRFixture(t, kernel.Options{})
				rc := newRawClient(t, f.srv, stdio)
				rc.write(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"` + c.tool + `","arguments":{"zone":"example.com","name":"www"}}}`)
				var q struct {
					ID     json.RawMessage `json:"id"`
					Method string          `json:"method"`
				}
				if err := json.Unmarshal([]byte(rc.read()), &q); err != nil || q.Method != "elicitation/create" {
					t.Fatalf("not asked: %v %+v", err, q)
				}
				rc.write(`{"jsonrpc":"2.0","id":` + string(q.ID) + `,` + c.answer + `}`)
				var a rpcAnswer
				raw := rc.read()
				if err := json.Unmarshal([]byte(raw), &a); err != nil || a.Error != nil || !a.Result.IsError ||
					!strings.Contains(raw, `"code":"`+c.code+`"`) || !strings.Contains(raw, misfit) {
					t.Fatalf("the answer: %s", raw)
				}
				if len(f.deleted()) != 0 {
					t.Fatalf("ran: %v", f.deleted())
				}
				r := f.records()
				if last := r[len(r)-1]; last.ErrorCode != c.code || last.Outcome != audit.Refused || (c.tool == "delete_item") != (last.Confirm == audit.ConfirmDeclined) {
					t.Fatalf("audit: %+v", last)
				}
			})
		}
	}
	for _, ans := range []map[string]any{
		{"action": "accept", "content": map[string]any{"confirm": "yes"}},
		{"action": "accept", "content": map[string]any{}},
		{"action": "maybe"},
	} {
		f := newMRTRFixture(t, kernel.Options{})
		state := f.ask(t, apiKey, item)
		a := f.call2026(t, apiKey, "delete_item", item, elicitCaps, map[string]any{"bulwark_confirm": ans}, state)
		if a.Error != nil || !a.Result.IsError || !strings.Contains(mcptestText(a), misfit) || !strings.Contains(mcptestText(a), "confirmation_declined") {
			t.Fatalf("2026-07-28 %v: %+v", ans, a)
		}
		if len(f.deleted()) != 0 {
			t.Fatalf("ran: %v", f.deleted())
		}
	}
}

func mcptestText(a rpcAnswer) string {
	var b strings.Builder
	for _, c := range a.Result.Content {
		if s, ok := c["text"].(string); ok {
			b.WriteString(s)
		}
	}
	return b.String()
}
