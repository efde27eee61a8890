package gateway_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/internal/fake/mcpupstream"
	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/mcptest"
	"github.com/bulwarkmcp/bulwark/servers/gateway"
)

// A result holding a content block of a type MCP does not define is an
// upstream_error that says so — not a connection failure "being
// restarted": nothing restarts, and the next call is answered by the same
// child.
func TestUnknownContentBlockSaysWhatHappened(t *testing.T) {
	f := newFixture(t, options{})
	res := f.sess.Call(t, "fake.echo", map[string]any{"text": mcpupstream.UnknownBlockText})
	wantError(t, res, string(kernel.UpstreamError))
	if got := text(res); strings.Contains(got, "restarting") || !strings.Contains(got, "not valid MCP") {
		t.Fatalf("the error does not say what happened: %s", got)
	}
	if res := f.sess.Call(t, "fake.echo", map[string]any{"text": "next"}); res.IsError {
		t.Fatalf("the next call: %s", text(res))
	}
	if log := f.log.String(); strings.Contains(log, "upstream session ended") || strings.Contains(log, "upstream restarted") {
		t.Fatalf("the upstream was restarted:\n%s", log)
	}
}

// A message over the stdio frame cap names that cap (twice
// max_result_bytes plus 64 KiB), not max_result_bytes.
func TestFrameCapErrorNamesTheFrameCap(t *testing.T) {
	u := fakeUpstream()
	u.MaxResultBytes = 100_000
	f := newFixture(t, options{cfg: gateway.Config{Upstreams: []gateway.Upstream{u}}})
	res := f.sess.Call(t, "fake.big", map[string]any{"bytes": 400_000})
	wantError(t, res, string(kernel.UpstreamUnavailable))
	want := fmt.Sprint(2*100_000 + 64<<10)
	if got := text(res); !strings.Contains(got, want) || strings.Contains(got, "100000 bytes") {
		t.Fatalf("want the %s-byte frame cap named: %s", want, got)
	}
}

// An upstream that asks the client a question the gateway does not relay
// (its configuration allows none; or it allows elicitation but the form is
// not one the relay accepts) gets an error, and the call fails with
// upstream_error — even though the upstream itself carries on and answers
// (the fake's "ask" ignores refusals). The fake speaks 2025-11-25 to the
// gateway here, so it asks with real requests; on 2026-07-28 it asks in its
// result (TestRelayRefusedByDefault).
func TestUnrelayedQuestionFailsTheCall(t *testing.T) {
	for _, relay := range []bool{false, true} {
		for _, version := range []string{"2025-11-25", ""} {
			t.Run(fmt.Sprintf("relay=%v/v%s", relay, version), func(t *testing.T) {
				u := fakeUpstream()
				u.Env = append(u.Env, mcpupstream.VersionsVar)
				u.PublicEnv = append(u.PublicEnv, mcpupstream.VersionsVar)
				u.RelayElicitation = relay
				getenv := func(n string) string {
					if n == mcpupstream.VersionsVar {
						return "2025-11-25"
					}
					return testEnv(n)
				}
				var a asked
				f := newFixture(t, options{cfg: gateway.Config{Upstreams: []gateway.Upstream{u}}, getenv: getenv})
				sess := mcptest.Connect(t, f.ks, &mcptest.Options{Client: a.handlers("accept"), ProtocolVersion: version})
				res := sess.Call(t, "fake.ask", map[string]any{})
				wantError(t, res, string(kernel.UpstreamError))
				if !strings.Contains(text(res), "did not relay") {
					t.Fatalf("result: %s", text(res))
				}
				if e, s := a.counts(); e+s != 0 {
					t.Fatalf("the client was asked (%d, %d)", e, s)
				}
				if res := sess.Call(t, "fake.echo", map[string]any{"text": "next"}); res.IsError {
					t.Fatalf("the next call: %s", text(res))
				}
			})
		}
	}
}

// A relaying upstream is sent a progress token only when the client asked
// for progress.
func TestRelayingUpstreamGetsNoUnaskedProgressToken(t *testing.T) {
	for _, version := range []string{"2025-11-25", ""} {
		var a asked
		_, sess := relayFixture(t, true, true, version, a.handlers("accept"))
		if got := text(sess.Call(t, "fake.meta", map[string]any{})); strings.Contains(got, "progressToken") {
			t.Errorf("v%s: a call without a progress token: the upstream got %s", version, got)
		}
		params := &mcp.CallToolParams{Name: "fake.meta", Arguments: map[string]any{}}
		params.SetProgressToken("client-tok")
		res, err := sess.CallTool(context.Background(), params)
		if err != nil {
			t.Fatal(err)
		}
		if got := text(res); !strings.Contains(got, `"progressToken":"bulwark-`) {
			t.Errorf("v%s: a call with a progress token: the upstream got %s", version, got)
		}
	}
}
