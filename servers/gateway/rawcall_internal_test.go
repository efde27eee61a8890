package gateway

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// child is the far end of a stdioConn: what the gateway writes, line by
// line, and a writer for what the "upstream" answers.
type child struct {
	t    *testing.T
	conn *stdioConn
	in   *bufio.Reader // what the gateway wrote
	out  *io.PipeWriter
}

func newChild(t *testing.T) *child {
	t.Helper()
	gwR, childW := io.Pipe() // child -> gateway
	childR, gwW := io.Pipe() // gateway -> child
	tr := &stdioTransport{r: gwR, w: gwW, maxLine: 1 << 16}
	if _, err := tr.Connect(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.conn.Close(); childW.Close() })
	return &child{t: t, conn: tr.conn, in: bufio.NewReader(childR), out: childW}
}

// request reads the next message the gateway wrote.
func (c *child) request() map[string]any {
	c.t.Helper()
	line, err := c.in.ReadBytes('\n')
	if err != nil {
		c.t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(line, &m); err != nil {
		c.t.Fatalf("%q: %v", line, err)
	}
	return m
}

// send writes lines as the upstream, in the background: the pipe holds
// nothing, and a message for the go-sdk waits until it is read.
func (c *child) send(lines ...string) {
	go func() {
		for _, l := range lines {
			if _, err := io.WriteString(c.out, l+"\n"); err != nil {
				return
			}
		}
	}()
}

type callEnd struct {
	res *mcp.CallToolResult
	err error
}

func (c *child) start(ctx context.Context) <-chan callEnd {
	done := make(chan callEnd, 1)
	go func() {
		p := &mcp.CallToolParams{Name: "echo", Arguments: json.RawMessage(`{"text":"hi"}`)}
		p.SetProgressToken("tok-1")
		res, err := rawCallTool(ctx, c.conn, p, 0)
		done <- callEnd{res, err}
	}()
	return done
}

func wait(t *testing.T, ch <-chan callEnd) callEnd {
	t.Helper()
	select {
	case e := <-ch:
		return e
	case <-time.After(10 * time.Second):
		t.Fatal("the call did not return")
	}
	return callEnd{}
}

// readSDK returns the next message handed to the go-sdk, or nil when none
// comes within a moment.
func readSDK(c *stdioConn) jsonrpc.Message {
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	m, _ := c.Read(ctx)
	return m
}

// An upstream that answers the gateway's call twice, answers with an id
// the gateway never issued, or with a wrong id: the call gets the first
// answer to its own id, the rest are dropped (as the go-sdk drops a
// response it did not ask for), and none of them reaches the go-sdk
// session, whose own (numeric) ids never match the gateway's.
func TestRawCallHostileIDs(t *testing.T) {
	c := newChild(t)
	done := c.start(context.Background())
	req := c.request()
	id, _ := req["id"].(string)
	params, _ := req["params"].(map[string]any)
	meta, _ := params["_meta"].(map[string]any)
	if !strings.HasPrefix(id, rawIDPrefix) || req["method"] != "tools/call" || params["name"] != "echo" || meta["progressToken"] != "tok-1" {
		t.Fatalf("request %v", req)
	}
	c.send(
		`{"jsonrpc":"2.0","id":"`+rawIDPrefix+`999","result":{"content":[{"type":"text","text":"never issued"}]}}`,
		`{"jsonrpc":"2.0","id":"other","result":{"content":[{"type":"text","text":"wrong id"}]}}`,
		`{"jsonrpc":"2.0","id":"`+id+`","result":{"content":[{"type":"text","text":"first"}]}}`,
		`{"jsonrpc":"2.0","id":"`+id+`","result":{"content":[{"type":"text","text":"second"}]}}`,
		`{"jsonrpc":"2.0","id":7,"result":{}}`,
	)
	// The wrong (non-gateway) id goes to the go-sdk, which drops it as
	// before; the duplicate and the never-issued one do not.
	if m, ok := readSDK(c.conn).(*jsonrpc.Response); !ok || m.ID.Raw() != "other" {
		t.Fatalf("go-sdk got %#v, want the response with id \"other\"", m)
	}
	e := wait(t, done)
	if e.err != nil || len(e.res.Content) != 1 || e.res.Content[0].(*mcp.TextContent).Text != "first" {
		t.Fatalf("call = %#v, %v", e.res, e.err)
	}
	if m, ok := readSDK(c.conn).(*jsonrpc.Response); !ok || m.ID.Raw() != int64(7) {
		t.Fatalf("go-sdk got %#v, want its own response 7 (the gateway's duplicates are dropped)", m)
	}
	c.conn.pendMu.Lock()
	n := len(c.conn.pend)
	c.conn.pendMu.Unlock()
	if n != 0 {
		t.Fatalf("%d calls still pending", n)
	}
}

// Requests and notifications of the upstream (progress, a question for the
// client) interleaved with the answer still reach the go-sdk session.
func TestRawCallPassesOtherMessagesToTheSession(t *testing.T) {
	c := newChild(t)
	done := c.start(context.Background())
	id := c.request()["id"].(string)
	c.send(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"tok-1","progress":1}}`,
		`{"jsonrpc":"2.0","id":3,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":"`+id+`","result":{"content":[]}}`)
	for _, want := range []string{"notifications/progress", "ping"} {
		if m, ok := readSDK(c.conn).(*jsonrpc.Request); !ok || m.Method != want {
			t.Fatalf("go-sdk got %#v, want %s", m, want)
		}
	}
	if e := wait(t, done); e.err != nil {
		t.Fatal(e.err)
	}
}

// A call given up (its context ends) tells the upstream with
// notifications/cancelled for its id, and a late answer is dropped.
func TestRawCallCancelled(t *testing.T) {
	c := newChild(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := c.start(ctx)
	id := c.request()["id"].(string)
	cancel()
	if e := wait(t, done); !errors.Is(e.err, context.Canceled) {
		t.Fatalf("call = %v, want context.Canceled", e.err)
	}
	n := c.request()
	p, _ := n["params"].(map[string]any)
	if n["method"] != "notifications/cancelled" || p["requestId"] != id {
		t.Fatalf("after cancel the upstream got %v", n)
	}
	c.send(`{"jsonrpc":"2.0","id":"` + id + `","result":{"content":[]}}`)
	if m := readSDK(c.conn); m != nil {
		t.Fatalf("the late answer reached the go-sdk: %#v", m)
	}
}

// A call whose time limit passes is given up with errCallTimeout, the
// upstream told with notifications/cancelled, and its late answer goes
// nowhere; the timer goes back stopped, and the next call (from the same
// pool) is not cut short by it.
func TestRawCallTimesOut(t *testing.T) {
	c := newChild(t)
	done := make(chan callEnd, 1)
	go func() {
		res, err := rawCallTool(context.Background(), c.conn, &mcp.CallToolParams{Name: "hang", Arguments: json.RawMessage(`{}`)}, 50*time.Millisecond)
		done <- callEnd{res, err}
	}()
	id := c.request()["id"].(string)
	if e := wait(t, done); !errors.Is(e.err, errCallTimeout) {
		t.Fatalf("call = %v, want errCallTimeout", e.err)
	}
	n := c.request()
	if p, _ := n["params"].(map[string]any); n["method"] != "notifications/cancelled" || p["requestId"] != id || p["reason"] != context.DeadlineExceeded.Error() {
		t.Fatalf("after the time limit the upstream got %v", n)
	}
	c.send(`{"jsonrpc":"2.0","id":"` + id + `","result":{"content":[]}}`)
	if m := readSDK(c.conn); m != nil {
		t.Fatalf("the late answer reached the go-sdk: %#v", m)
	}
	for range 3 { // pooled timers: a slow answer within a long limit
		go func() {
			res, err := rawCallTool(context.Background(), c.conn, &mcp.CallToolParams{Name: "echo", Arguments: json.RawMessage(`{}`)}, time.Minute)
			done <- callEnd{res, err}
		}()
		id := c.request()["id"].(string)
		time.Sleep(80 * time.Millisecond)
		c.send(`{"jsonrpc":"2.0","id":"` + id + `","result":{"content":[{"type":"text","text":"ok"}]}}`)
		if e := wait(t, done); e.err != nil || len(e.res.Content) != 1 {
			t.Fatalf("call within its limit = %v, %v", e.res, e.err)
		}
	}
}

// An upstream that dies mid-call (EOF), or sends a line the gateway cannot
// decode, fails the call as a closed connection at once — never a hang —
// and the go-sdk session gets the error too (so the supervisor restarts).
func TestRawCallConnectionEnds(t *testing.T) {
	for name, end := range map[string]func(c *child){
		"eof":     func(c *child) { c.out.Close() },
		"garbage": func(c *child) { c.send(`{"jsonrpc":"2.0","id":"` + rawIDPrefix + `1","result":`) },
		"toolong": func(c *child) { c.send(`"` + strings.Repeat("a", 1<<17) + `"`) },
		// Budget: nesting far past the go-sdk's 1000 levels, within the
		// line cap, is refused by a byte count before any decoder recurses.
		"deep": func(c *child) {
			c.send(`{"jsonrpc":"2.0","id":"` + rawIDPrefix + `1","result":{"content":` + strings.Repeat("[", 30000) + strings.Repeat("]", 30000) + `}}`)
		},
	} {
		t.Run(name, func(t *testing.T) {
			c := newChild(t)
			done := c.start(context.Background())
			c.request()
			end(c)
			if e := wait(t, done); !errors.Is(e.err, mcp.ErrConnectionClosed) {
				t.Fatalf("call = %v, want ErrConnectionClosed", e.err)
			}
			if _, err := c.conn.Read(context.Background()); err == nil {
				t.Fatal("the go-sdk session did not get the error")
			}
			// A call after the end fails at once.
			if e := wait(t, c.start(context.Background())); !errors.Is(e.err, mcp.ErrConnectionClosed) {
				t.Fatalf("later call = %v", e.err)
			}
		})
	}
}

// A JSON-RPC error answer is the same *jsonrpc.Error the go-sdk returns;
// a result that does not decode is a call error, not a broken connection.
func TestRawCallErrors(t *testing.T) {
	c := newChild(t)
	done := c.start(context.Background())
	id := c.request()["id"].(string)
	c.send(`{"jsonrpc":"2.0","id":"` + id + `","error":{"code":-32602,"message":"no such tool"}}`)
	var je *jsonrpc.Error
	if e := wait(t, done); !errors.As(e.err, &je) || je.Message != "no such tool" {
		t.Fatalf("call = %v", e.err)
	}
	done = c.start(context.Background())
	id = c.request()["id"].(string)
	c.send(`{"jsonrpc":"2.0","id":"` + id + `","result":{"content":[{"type":"video"}]}}`)
	if e := wait(t, done); e.err == nil || errors.Is(e.err, mcp.ErrConnectionClosed) {
		t.Fatalf("call = %v, want a decoding error", e.err)
	}
}

// An input_required result (2026-07-28) from an upstream whose questions
// are not relayed: roots are answered with none and the call is retried
// with the upstream's requestState, as the go-sdk does; an elicitation is
// refused with the go-sdk's error; an upstream that keeps asking stops
// after the go-sdk's retry limit.
func TestRawCallInputRequired(t *testing.T) {
	c := newChild(t)
	done := c.start(context.Background())
	id := c.request()["id"].(string)
	c.send(`{"jsonrpc":"2.0","id":"` + id + `","result":{"inputRequests":{"r":{"method":"roots/list","params":{}}},"requestState":"st-1","resultType":"input_required"}}`)
	retry := c.request()
	p, _ := retry["params"].(map[string]any)
	if p["requestState"] != "st-1" || !strings.Contains(mustJSON(p["inputResponses"]), `"roots":[]`) {
		t.Fatalf("retry %v", retry)
	}
	c.send(`{"jsonrpc":"2.0","id":"` + retry["id"].(string) + `","result":{"inputRequests":{"q":{"method":"elicitation/create","params":{"message":"pw?","requestedSchema":{"type":"object"}}}}}}`)
	var je *jsonrpc.Error
	if e := wait(t, done); !errors.As(e.err, &je) || !strings.Contains(e.err.Error(), "input request") || je.Message != "client does not support elicitation" {
		t.Fatalf("call = %v", e.err)
	}
	done = c.start(context.Background())
	for i := 0; i < maxLoadShedRetries; i++ {
		c.send(`{"jsonrpc":"2.0","id":"` + c.request()["id"].(string) + `","result":{"inputRequests":{}}}`)
	}
	if e := wait(t, done); e.err == nil || !strings.Contains(e.err.Error(), "load-shedding") {
		t.Fatalf("call = %v", e.err)
	}
}

func mustJSON(v any) string { b, _ := json.Marshal(v); return string(b) }

// Calls wait on pooled channels: an answer that comes as its call gives up
// (the upstream answers while the client cancels) never reaches a later
// call, which gets its own answer.
func TestRawCallLateAnswerReachesNoOtherCall(t *testing.T) {
	c := newChild(t)
	for i := range 50 {
		ctx, cancel := context.WithCancel(context.Background())
		done := c.start(ctx)
		id := c.callRequest()["id"].(string)
		c.send(`{"jsonrpc":"2.0","id":"` + id + `","result":{"content":[{"type":"text","text":"stale"}]}}`)
		cancel()
		wait(t, done)
		done = c.start(context.Background())
		c.send(`{"jsonrpc":"2.0","id":"` + c.callRequest()["id"].(string) + `","result":{"content":[{"type":"text","text":"fresh"}]}}`)
		if e := wait(t, done); e.err != nil || e.res.Content[0].(*mcp.TextContent).Text != "fresh" {
			t.Fatalf("round %d: call = %#v, %v", i, e.res, e.err)
		}
	}
}

// callRequest reads the gateway's next tools/call, past the
// notifications/cancelled of calls given up.
func (c *child) callRequest() map[string]any {
	c.t.Helper()
	for {
		if m := c.request(); m["method"] == "tools/call" {
			return m
		}
	}
}
