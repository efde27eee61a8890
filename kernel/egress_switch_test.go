package kernel_test

import (
	"context"
	"strings"
	"testing"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/egress"
	"github.com/bulwarkmcp/bulwark/kernel/mcptest"
	"github.com/bulwarkmcp/bulwark/kernel/untrusted"
)

// TestEgressSwitchTakesEffect: the benchmarks' switch (egress.SetGate)
// really turns the gate off — a secret the gate removes reaches the client
// — so that a benchmark of the gate against "off" does not compare the
// gate with itself; and on again, it is removed.
func TestEgressSwitchTakesEffect(t *testing.T) {
	const secret = "sk-switch-0123456789abcdef"
	tool := kernel.NewTool(kernel.Spec[struct{}, any]{
		Name: "echo_secret", Description: "Echoes a secret.", Policy: readPolicy,
		Handle: func(context.Context, *kernel.Call, struct{}) (any, error) {
			return map[string]any{"said": "the key is " + secret}, nil
		},
	})
	ks, err := kernel.New(kernel.Info{Name: "switch"}, []kernel.Tool{tool}, &kernel.Options{Envelope: untrusted.Envelope{Source: "switch-api"}, Secrets: []string{secret}})
	if err != nil {
		t.Fatal(err)
	}
	sess := mcptest.Connect(t, ks, nil)
	if text := mcptest.Text(sess.Call(t, "echo_secret", map[string]any{})); strings.Contains(text, secret) {
		t.Fatalf("the gate let the secret through: %s", text)
	}
	egress.SetGate(ks, false)
	if text := mcptest.Text(sess.Call(t, "echo_secret", map[string]any{})); !strings.Contains(text, secret) {
		t.Fatalf("with the gate off the secret was still removed: the switch does nothing: %s", text)
	}
	egress.SetGate(ks, true)
	if text := mcptest.Text(sess.Call(t, "echo_secret", map[string]any{})); strings.Contains(text, secret) {
		t.Fatalf("the gate on again let the secret through: %s", text)
	}
}
