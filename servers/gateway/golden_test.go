package gateway_test

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/confirm"
	"github.com/bulwarkmcp/bulwark/kernel/mcptest"
)

// TestGoldenTranscripts records the wire of two security behaviours of the
// gateway: a relayed destructive tool's confirmation flow, and a relayed
// result that carries an injection, a closing tag and a secret.
// Regenerate with UPDATE_GOLDEN=1.
func TestGoldenTranscripts(t *testing.T) {
	f := newFixture(t, options{kopts: kernel.Options{Confirm: confirm.NewIssuer(nil, &confirm.Options{Rand: &mcptest.CountingReader{}})}})
	args := map[string]any{"path": "/tmp/a", "content": "one"}
	tok := mcptest.ConfirmToken(t, f.sess.Call(t, "fake.write_file", args))
	args["confirmToken"] = tok
	f.sess.Call(t, "fake.write_file", args)
	flow := f.sess.Transcript()
	f.sess.Reset()
	f.sess.Call(t, "fake.inject", map[string]any{})
	inject := f.sess.Transcript()
	mcptest.Golden(t, "testdata/transcripts/confirm.txtar",
		"A relayed tool the configuration does not list is destructive: refused with a token bound to the upstream, the tool, its pin, the target and every argument; the same call with the token goes through.",
		map[string]string{"flow": flow}, []string{"flow"})
	mcptest.Golden(t, "testdata/transcripts/inject.txtar",
		"A relayed result whose structured content carries an injected instruction, a closing envelope tag and a secret under a secret-named key: enveloped (the text is the JSON, as the kernel renders it), the tag neutralized, the secret redacted.",
		map[string]string{"call": inject}, []string{"call"})
}

// TestGoldenConsentByElicitation records the question the gateway asks the
// person for a relayed destructive tool: the tool, the upstream and its
// name there, the target in canonical form, the arguments as the upstream
// receives them (name: value lines, cleaned, a newline escaped so it cannot
// forge a line, a bidirectional control made visible), and the binding's
// digest as one reference line. Regenerate with UPDATE_GOLDEN=1.
func TestGoldenConsentByElicitation(t *testing.T) {
	f := newFixture(t, options{})
	var asked []string
	sess := mcptest.Connect(t, f.ks, &mcptest.Options{ProtocolVersion: "2025-11-25", Client: &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked = append(asked, r.Params.Message)
			return &mcp.ElicitResult{Action: "decline"}, nil
		},
	}})
	args := map[string]any{"path": "/tmp/../tmp/./a", "content": "one\nTarget: path \"/etc/passwd\"\u202e"}
	if res := sess.Call(t, "fake.write_file", args); !res.IsError {
		t.Fatalf("a declined call ran: %s", mcptest.Text(res))
	}
	if len(asked) != 1 || strings.Contains(asked[0], "\nTarget: path \"/etc") || strings.Contains(asked[0], "\u202e") ||
		!strings.Contains(asked[0], "\nTarget: path \"/tmp/a\"\n") {
		t.Fatalf("the question: %q", asked)
	}
	mcptest.Golden(t, "testdata/transcripts/consent.txtar",
		"2025-11-25 session: a relayed destructive tool asks the person with elicitation/create — tool, upstream, canonical target, the arguments as the upstream receives them (cleaned, one line each), one reference line; a decline relays nothing.",
		map[string]string{"wire": sess.Transcript()}, []string{"wire"})
}
