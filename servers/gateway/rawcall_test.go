package gateway_test

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/internal/fake/mcpupstream"
	"github.com/bulwarkmcp/bulwark/servers/gateway"
)

// errorIDs are the per-call ids in tool errors, which differ between runs.
var errorIDs = regexp.MustCompile(`[0-9a-f]{16,}|err_[A-Za-z0-9]+`)

// answer is what a client sees of a call, with per-call ids removed.
func answer(res *mcp.CallToolResult) string {
	b, _ := json.Marshal(res)
	return errorIDs.ReplaceAllString(string(b), "ID")
}

// The gateway's own relayed call (rawcall.go) answers every call of the
// hostile upstream exactly as the go-sdk client session did: the same
// result, enveloped and scrubbed the same way, the same tool errors for an
// oversized answer, an upstream error, a crash mid-call, a hang and an
// upstream that asks for input the gateway does not relay.
func TestRawCallsAnswerAsTheSDKPath(t *testing.T) {
	// Two pairs of fixtures: a generous call timeout for every call but the
	// hang, so that a loaded machine cannot turn a slow big or progress
	// answer into a timeout on one path only (it did, at load 7 and above),
	// and a short one for the hang and the call after it.
	u := fakeUpstream()
	u.MaxResultBytes = 100_000
	u.ReadOnlyTools = append(append([]string{}, readOnlyTools...), "elicit", "sample")
	u.CallTimeout = gateway.Duration(30 * time.Second)
	compareRawAndSDK(t, gateway.Config{Upstreams: []gateway.Upstream{u}}, []rawCase{
		{"fake.echo", map[string]any{"text": strings.Repeat("x", 1024)}},
		{"fake.echo", map[string]any{"text": "a\u202eb <&> \"q\" \\ " + mcpupstream.Injection}},
		{"fake.inject", nil},
		{"fake.secret", nil},
		{"fake.resource", nil},
		{"fake.image", map[string]any{"bytes": 300}},
		{"fake.fail", nil},
		{"fake.whoami", map[string]any{"x": "<&>", "n": 1.5, "deep": map[string]any{"a": []any{1, "b", nil}}}},
		{"fake.env", nil},
		{"fake.big", map[string]any{"bytes": 5000}},
		{"fake.big", map[string]any{"bytes": 150_000}},
		{"fake.progress", nil},
		{"fake.elicit", map[string]any{"message": "your password?"}},
		{"fake.sample", map[string]any{"prompt": "hi", "maxTokens": 5}},
		{"fake.ask", nil},
		{"fake.slow", map[string]any{"ms": 10}},
		{"fake.crash", nil},
		{"fake.echo", map[string]any{"text": "after"}},
	})
	u.CallTimeout = gateway.Duration(300 * time.Millisecond)
	compareRawAndSDK(t, gateway.Config{Upstreams: []gateway.Upstream{u}}, []rawCase{
		{"fake.hang", nil},
		{"fake.echo", map[string]any{"text": "after"}},
	})
}

type rawCase struct {
	tool string
	args map[string]any
}

// compareRawAndSDK makes each call through a gateway on the raw path and
// one on the go-sdk path, and fails where the answers differ. Before a call
// of echo "after", both wait until their upstream answers again.
func compareRawAndSDK(t *testing.T, cfg gateway.Config, calls []rawCase) {
	t.Helper()
	raw := newFixture(t, options{cfg: cfg})
	sdk := newFixture(t, options{cfg: cfg, sdk: true})
	for _, c := range calls {
		if c.args == nil {
			c.args = map[string]any{}
		}
		if c.tool == "fake.echo" && c.args["text"] == "after" {
			eventually(t, raw)
			eventually(t, sdk)
		}
		got, want := answer(raw.sess.Call(t, c.tool, c.args)), answer(sdk.sess.Call(t, c.tool, c.args))
		if testing.Verbose() {
			t.Logf("%s: %.300s", c.tool, got)
		}
		if got != want {
			t.Errorf("%s %v:\nraw path: %s\ngo-sdk:   %s", c.tool, c.args, got, want)
		}
	}
}

// Concurrent calls on one upstream connection each get their own answer:
// the gateway's ids route every response to the call that sent it.
func TestRawCallsConcurrent(t *testing.T) {
	f := newFixture(t, options{})
	var wg sync.WaitGroup
	errs := make(chan string, 64)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 10 {
				want := fmt.Sprintf("caller %d call %d", g, i)
				res := f.sess.Call(t, "fake.echo", map[string]any{"text": want})
				if got := text(res); res.IsError || !strings.Contains(got, want+"\n") {
					errs <- fmt.Sprintf("%s: got %s", want, got)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}
