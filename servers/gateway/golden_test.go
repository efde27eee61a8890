package gateway_test

import (
	"testing"

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
