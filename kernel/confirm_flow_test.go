package kernel_test

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/audit"
	"github.com/bulwarkmcp/bulwark/kernel/mcptest"
)

func TestConfirmationFlow(t *testing.T) {
	f := newFixture(t, kernel.Options{})
	args := map[string]any{"zone": "example.com", "name": "www"}

	first := f.sess.Call(t, "delete_item", args)
	tok := token(t, first)
	text := mcptest.Text(first)
	for _, want := range []string{`Refusing to delete item "www" of zone "example.com" without confirmation.`, "It currently holds 2 record(s), TTL 300.", tok} {
		if !strings.Contains(text, want) {
			t.Fatalf("refusal lacks %q: %s", want, text)
		}
	}
	if len(f.deleted) != 0 {
		t.Fatal("acted without confirmation")
	}

	// A wrong token is refused with a fresh one and does not spend tok.
	wrong := f.sess.Call(t, "delete_item", with(args, "confirmToken", "not-a-token"))
	if fresh := token(t, wrong); fresh == tok {
		t.Fatal("refusal reused the pending token")
	}
	// A token for another target is refused and does not spend tok.
	other := f.sess.Call(t, "delete_item", with(with(args, "name", "mail"), "confirmToken", tok))
	token(t, other)

	done := f.sess.Call(t, "delete_item", with(args, "confirmToken", tok))
	if done.IsError || len(f.deleted) != 1 {
		t.Fatalf("confirmed call failed: %s", mcptest.Text(done))
	}
	replay := f.sess.Call(t, "delete_item", with(args, "confirmToken", tok))
	token(t, replay)
	if !strings.Contains(mcptest.Text(replay), "does not confirm this exact call") || len(f.deleted) != 1 {
		t.Fatalf("replay not refused: %s", mcptest.Text(replay))
	}
}

func TestConfirmationBoundToPayload(t *testing.T) {
	f := newFixture(t, kernel.Options{})
	a := map[string]any{"zone": "example.com", "records": []any{map[string]any{"value": "198.51.100.1"}}}
	b := map[string]any{"zone": "example.com", "records": []any{map[string]any{"value": "198.51.100.66"}}}
	tok := token(t, f.sess.Call(t, "set_records", a))
	if res := f.sess.Call(t, "set_records", with(b, "confirmToken", tok)); !res.IsError {
		t.Fatal("a token for one record list executed another")
	}
	// Key order and white space do not matter: the same payload, spelled
	// differently, is confirmed.
	same := map[string]any{"records": []any{map[string]any{"value": "198.51.100.1"}}, "zone": "example.com", "confirmToken": tok}
	if res := f.sess.Call(t, "set_records", same); res.IsError {
		t.Fatalf("same payload refused: %s", mcptest.Text(res))
	}
}

func TestConditionalGate(t *testing.T) {
	f := newFixture(t, kernel.Options{})
	if res := f.sess.Call(t, "change_protection", map[string]any{"zone": "z", "delete": true}); res.IsError {
		t.Fatalf("turning protection on was gated: %s", mcptest.Text(res))
	}
	tok := token(t, f.sess.Call(t, "change_protection", map[string]any{"zone": "z", "delete": false}))
	if res := f.sess.Call(t, "change_protection", map[string]any{"zone": "z", "delete": false, "confirmToken": tok}); res.IsError {
		t.Fatalf("confirmed removal failed: %s", mcptest.Text(res))
	}
}

func TestRefusalAudited(t *testing.T) {
	f := newFixture(t, kernel.Options{})
	f.sess.Call(t, "delete_item", map[string]any{"zone": "example.com", "name": "www"})
	r := f.audit[len(f.audit)-1]
	if r.Outcome != audit.Refused || r.ErrorCode != "confirmation_required" || r.Tool != "delete_item" || r.Principal != "local" {
		t.Fatalf("audit %+v", r)
	}
}

func with(m map[string]any, k string, v any) map[string]any {
	out := map[string]any{}
	for key, val := range m {
		out[key] = val
	}
	out[k] = v
	return out
}

func TestGatedToolAdvertisesConfirmToken(t *testing.T) {
	f := newFixture(t, kernel.Options{})
	res, err := f.sess.ListTools(context.Background(), &mcp.ListToolsParams{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range res.Tools {
		props := tool.InputSchema.(map[string]any)["properties"].(map[string]any)
		_, has := props["confirmToken"]
		gated := tool.Name == "delete_item" || tool.Name == "set_records" || tool.Name == "change_protection"
		if has != gated {
			t.Errorf("%s: confirmToken advertised %v, gated %v", tool.Name, has, gated)
		}
	}
}

func TestNothingToLoseSkipsTheGate(t *testing.T) {
	f := newFixture(t, kernel.Options{})
	res := f.sess.Call(t, "delete_item", map[string]any{"zone": "example.com", "name": "empty"})
	if res.IsError || len(f.deleted) != 1 {
		t.Fatalf("a call with nothing to lose was gated: %s", mcptest.Text(res))
	}
}
