package kernel_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/confirm"
	"github.com/bulwarkmcp/bulwark/kernel/mcptest"
)

// slowServer is the test tools and "wait", which blocks until its call is
// cancelled (at most 10 s) and then fails.
func slowServer(t testing.TB, opts *kernel.Options) *kernel.Server {
	t.Helper()
	o := kernel.Options{}
	if opts != nil {
		o = *opts
	}
	o.Confirm = confirm.NewIssuer(nil, &confirm.Options{Rand: &mcptest.CountingReader{}})
	tools := append(testTools(new([]string)), kernel.NewTool(kernel.Spec[itemArgs, map[string]string]{
		Name: "wait", Description: "Waits for its cancellation.", Policy: readPolicy,
		Handle: func(ctx context.Context, c *kernel.Call, in itemArgs) (map[string]string, error) {
			select {
			case <-ctx.Done():
				return nil, kernel.Errorf(kernel.UpstreamError, "The call was cancelled.")
			case <-time.After(10 * time.Second):
				return map[string]string{"waited": in.Name}, nil
			}
		},
	}), kernel.NewTool(kernel.Spec[itemArgs, map[string]string]{
		Name: "progress_elsewhere", Description: "Reports progress with another context than its call's, as the gateway relays it.", Policy: readPolicy,
		Handle: func(ctx context.Context, c *kernel.Call, in itemArgs) (map[string]string, error) {
			c.Progress(context.Background(), 1, 2, "relayed")
			return map[string]string{"done": in.Name}, nil
		},
	}))
	srv, err := kernel.New(kernel.Info{Name: "test", Version: "v0"}, tools, &o)
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

// TestStdioFastPathCancel: notifications/cancelled ends a fast-path call
// (its answer comes at once, as the go-sdk's does), a request reusing the
// id of a call in flight gets no answer on either path, and a
// cancellation of nothing changes nothing.
func TestStdioFastPathCancel(t *testing.T) {
	p := pairOf(t, slowServer(t, nil), slowServer(t, nil))
	p.initialize(stdioInit)
	p.wait = 500 * time.Millisecond
	wait := call(`7`, `"wait"`, `{"zone":"z","name":"n"}`, "")
	got := p.step(wait) // times out on both: the call waits
	if len(got) != 1 || got[0] != "(timed out)" {
		t.Fatalf("the waiting call answered: %q", got)
	}
	p.step(call(`7`, `"get_item"`, `{"zone":"z","name":"n"}`, "")) // a duplicate id: no answer
	p.wait = 5 * time.Second
	p.step(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"7"}}`)
	// The go-sdk cancels asynchronously: wait for the answer to 7 itself.
	got = p.stepWant(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"x"}}`, "7")
	if len(got) != 1 || !strings.Contains(got[0], `"id":7,"result"`) || !strings.Contains(got[0], "cancelled") {
		t.Fatalf("the cancelled call's answer: %q", got)
	}
	p.step(call(`7`, `"get_item"`, `{"zone":"z","name":"n"}`, "")) // the id is free again
	// A string id, escaped in the call and not in the cancellation.
	p.wait = 500 * time.Millisecond
	p.step(call(`"\u0061"`, `"wait"`, `{"zone":"z","name":"n"}`, ""))
	p.wait = 5 * time.Second
	got = p.stepWant(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"a"}}`, `"a"`)
	if len(got) != 1 || !strings.Contains(got[0], `"id":"a","result"`) {
		t.Fatalf("the cancelled call's answer: %q", got)
	}
}

// TestStdioFastPathElicitingClient: a client that declared elicitation
// gets gated calls from the go-sdk's path (the gate asks it with a
// session request), the other calls from the fast path, alike.
func TestStdioFastPathElicitingClient(t *testing.T) {
	p := newStdioPair(t, 1000)
	p.initialize(strings.Replace(stdioInit, `"capabilities":{}`, `"capabilities":{"elicitation":{}}`, 1))
	p.wait = time.Second
	item := `{"zone":"example.com","name":"www"}`
	p.step(call(`1`, `"get_item"`, item, ""))
	got := p.step(call(`2`, `"delete_item"`, item, ""))
	if len(got) != 2 || !strings.Contains(got[0], `"method":"elicitation/create"`) {
		t.Fatalf("the gate did not ask the person: %q", got)
	}
}

// TestStdioFastPathDynamic: tools added and withdrawn at run time are
// called alike on both paths.
func TestStdioFastPathDynamic(t *testing.T) {
	build := func() *kernel.Server {
		srv, err := kernel.New(kernel.Info{Name: "t"}, []kernel.Tool{runtimeTool("a", "A1", true)}, &kernel.Options{DynamicTools: true})
		if err != nil {
			t.Fatal(err)
		}
		return srv
	}
	fast, sdk := build(), build()
	p := pairOf(t, fast, sdk)
	p.skip = "notifications/tools/list_changed" // sent by the go-sdk on both, after a delay of its own
	p.initialize(stdioInit)
	p.step(call(`1`, `"a"`, `{}`, ""))
	for _, srv := range []*kernel.Server{fast, sdk} {
		if _, err := srv.AddTools(runtimeTool("b", "B1", true), runtimeTool("a", "A2", true)); err != nil {
			t.Fatal(err)
		}
	}
	p.step(call(`2`, `"a"`, `{}`, ""))
	p.step(call(`3`, `"b"`, `{}`, ""))
	for _, srv := range []*kernel.Server{fast, sdk} {
		if err := srv.WithdrawTool("b", &kernel.Error{Code: kernel.PermissionDenied, Message: "Withdrawn."}); err != nil {
			t.Fatal(err)
		}
	}
	got := p.step(call(`4`, `"b"`, `{}`, ""))
	if len(got) != 1 || !strings.Contains(got[0], "Withdrawn.") {
		t.Fatalf("withdrawn tool: %q", got)
	}
	p.step(`{"jsonrpc":"2.0","id":5,"method":"tools/list"}`)
}

// TestStdioFastPathRateLimit: the limit's refusal (-32000) is the go-sdk's
// error response, byte for byte, on the fast path.
func TestStdioFastPathRateLimit(t *testing.T) {
	p := newStdioPair(t, 2)
	p.initialize(stdioInit)
	for i := range 3 {
		got := p.step(call(fmt.Sprint(i+1), `"get_item"`, `{"zone":"z","name":"n"}`, ""))
		if refused := strings.Contains(strings.Join(got, ""), `"code":-32000`); refused != (i == 2) {
			t.Fatalf("call %d: %q", i, got)
		}
	}
}

// TestStdioHugeLine: a 16 MiB line, past maxStdioLine (3 MiB), ends the
// session on both paths alike, and the fast path buffers only the line's
// first maxStdioLine before handing it on: it allocates, beyond what the
// go-sdk alone allocates for the same input, less than twice maxStdioLine
// (its one buffer of the line, grown by doubling; measured: about one).
func TestStdioHugeLine(t *testing.T) {
	const lineBytes = 16 << 20
	huge := call(`1`, `"get_item"`, `{"zone":"z","name":"`+strings.Repeat("a", lineBytes)+`"}`, "")
	p := newStdioPair(t, 1000)
	p.initialize(stdioInit)
	p.step(huge)
	if !p.fast.ended {
		t.Fatal("a 16 MiB line did not end the session")
	}
	cost := func(disable bool) uint64 {
		srv := fastServer(t, 1000, time.Now)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		err := srv.ServeStdioWith(context.Background(), io.NopCloser(strings.NewReader(stdioInit+"\n"+
			`{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"+huge+"\n")), nopWriteCloser{io.Discard}, kernel.StdioOptions{DisableFastPath: disable})
		runtime.ReadMemStats(&after)
		if err == nil {
			t.Fatal("a 16 MiB line was read")
		}
		return after.TotalAlloc - before.TotalAlloc
	}
	fast, sdk := cost(false), cost(true)
	t.Logf("bytes allocated for a %d-byte line: fast path %d, go-sdk alone %d", len(huge), fast, sdk)
	if budget := uint64(2 * kernel.MaxStdioLineForTest); fast > sdk+budget {
		t.Fatalf("the fast path allocates %d bytes for a %d-byte line, the go-sdk alone %d: more than %d beyond it", fast, len(huge), sdk, budget)
	}
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// TestStdioClientStopsReading: a client that floods requests and reads
// none of its answers holds at most maxOwed handlers (each blocked on the
// write): the server stops reading instead of queueing. Once it reads,
// every answer comes.
func TestStdioClientStopsReading(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	stdioClientStopsReading(t, inR, inW, outR, outW)
}

// stdioClientStopsReading is TestStdioClientStopsReading over the pipes
// given (also OS pipes: stdio_pipes_linux_test.go).
func stdioClientStopsReading(t *testing.T, inR io.ReadCloser, inW io.WriteCloser, outR io.ReadCloser, outW io.WriteCloser) {
	srv := slowServer(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.ServeStdio(ctx, inR, outW) }()
	t.Cleanup(func() { cancel(); inW.Close(); outR.Close() })
	out := bufio.NewReader(outR)
	write := func(s string) {
		if _, err := io.WriteString(inW, s+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	write(stdioInit)
	if _, err := out.ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	write(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	base := runtime.NumGoroutine()
	const n = 3000
	sent := make(chan int, 1)
	go func() {
		i := 0
		for ; i < n; i++ {
			line := call(fmt.Sprint(i+1), `"list_items"`, `{"count":5}`, "")
			if i%3 == 1 {
				line = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"prompts/list"}`, i+1) // the go-sdk's
			}
			if _, err := io.WriteString(inW, line+"\n"); err != nil {
				break
			}
		}
		sent <- i
	}()
	// Wait until the server stops taking input.
	peak := 0
	for stable, last := 0, -1; stable < 10; {
		time.Sleep(20 * time.Millisecond)
		g := runtime.NumGoroutine()
		peak = max(peak, g)
		if g == last {
			stable++
		} else {
			stable, last = 0, g
		}
	}
	select {
	case <-sent:
		t.Fatal("the server read every request while its answers went unread")
	default:
	}
	if extra := peak - base; extra > 2*256+50 {
		t.Fatalf("%d goroutines for a client that reads nothing (maxOwed 256)", extra)
	}
	answers := 0
	for answers < n {
		line, err := out.ReadString('\n')
		if err != nil {
			t.Fatalf("after %d answers: %v", answers, err)
		}
		var m struct {
			ID json.RawMessage `json:"id"`
		}
		if json.Unmarshal([]byte(line), &m) == nil && len(m.ID) > 0 {
			answers++
		}
	}
	if got := <-sent; got != n {
		t.Fatalf("sent %d", got)
	}
	inW.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("ServeStdio did not end at EOF")
	}
}

// TestStdioCancelEndsServe: cancelling the context ends ServeStdio at once,
// with fast-path calls in flight, and leaves no goroutine behind.
func TestStdioCancelEndsServe(t *testing.T) {
	srv := slowServer(t, nil)
	base := runtime.NumGoroutine()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	go func() { _, _ = io.Copy(io.Discard, outR) }()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.ServeStdio(ctx, inR, outW) }()
	lines := stdioInit + "\n" + `{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"
	if _, err := io.WriteString(inW, lines); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond) // the initialize answer
	for i := range 20 {
		if _, err := io.WriteString(inW, call(fmt.Sprint(i+1), `"wait"`, `{"zone":"z","name":"n"}`, "")+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(50 * time.Millisecond)
	start := time.Now()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("ServeStdio did not end on cancel")
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("ending took %v", d)
	}
	inW.Close()
	outR.Close()
	deadline := time.Now().Add(3 * time.Second)
	for runtime.NumGoroutine() > base+2 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if g := runtime.NumGoroutine(); g > base+2 {
		t.Fatalf("%d goroutines left behind", g-base)
	}
}

// TestStdioFastPathModernSession: a client that opens with server/discover
// and speaks 2026-07-28 per request (the go-sdk's own client does) gets the
// same answers; the first such request is the go-sdk's (it takes the
// session's parameters from it), the later ones the fast path's.
func TestStdioFastPathModernSession(t *testing.T) {
	p := newStdioPair(t, 1000)
	m := `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`
	item := `{"zone":"example.com","name":"www"}`
	p.step(call(`1`, `"get_item"`, item, m)) // before discover: the go-sdk's
	p.step(discover(`2`, m))
	p.step(`{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"_meta":` + m + `}}`)
	p.step(call(`4`, `"get_item"`, item, m))
	p.step(call(`5`, `"change_ttl"`, `{"zone":"z","ttl":300}`, withMeta(m, `"progressToken":"p","io.modelcontextprotocol/logLevel":"debug"`)))
	p.step(call(`6`, `"delete_item"`, item, m))
	p.step(call(`7`, `"get_item"`, item, "")) // legacy, uninitialized: refused by the go-sdk on both
	p.step(`{"jsonrpc":"2.0","id":8,"method":"ping","params":{"_meta":` + m + `}}`)
}

// TestStdioFastPathInitializeAsksModern: a client whose initialize asks for
// 2026-07-28 (negotiated down to a legacy version) has its results marked
// resultType "complete" by the go-sdk (its MRTR rule reads the version
// asked for): alike on the fast path, for legacy and 2026-07-28 calls.
func TestStdioFastPathInitializeAsksModern(t *testing.T) {
	p := newStdioPair(t, 1000)
	p.initialize(strings.Replace(stdioInit, `"protocolVersion":"2025-11-25"`, `"protocolVersion":"2026-07-28"`, 1))
	got := p.step(call(`1`, `"get_item"`, `{"zone":"z","name":"n"}`, ""))
	if len(got) != 1 || !strings.Contains(got[0], `"resultType":"complete"`) {
		t.Fatalf("answer: %q", got)
	}
	p.step(call(`2`, `"get_item"`, `{"zone":"z","name":"n"}`, modernMeta))
	p.step(`{"jsonrpc":"2.0","id":3,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
	p.step(call(`4`, `"get_item"`, `{"zone":"z","name":"n"}`, ""))
}

// TestStdioFastPathProgressElsewhere: progress a handler reports with
// another context than its call's (the gateway relays an upstream's from
// the upstream session's handler) reaches the client on the fast path as
// on the go-sdk's, before the answer.
func TestStdioFastPathProgressElsewhere(t *testing.T) {
	p := pairOf(t, slowServer(t, nil), slowServer(t, nil))
	p.initialize(stdioInit)
	for _, meta := range []string{`{"progressToken":"p"}`, withMeta(modernMeta, `"progressToken":"p"`)} {
		got := p.step(call(`1`, `"progress_elsewhere"`, `{"zone":"z","name":"n"}`, meta))
		if len(got) != 2 || !strings.Contains(strings.Join(got, ""), `"message":"relayed"`) {
			t.Fatalf("answer: %q", got)
		}
	}
	c := newStdioRoundTrip(t, slowServer(t, nil), false)
	first := c.do(t, call(`2`, `"progress_elsewhere"`, `{"zone":"z","name":"n"}`, `{"progressToken":"p"}`))
	if !strings.Contains(first, "notifications/progress") {
		t.Fatalf("the progress did not come before the answer: %s", first)
	}
}
