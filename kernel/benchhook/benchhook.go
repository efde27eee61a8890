// Package benchhook holds the switches the module's benchmarks need to
// measure a step against the same call without it, in one run
// (docs/performance.md). The kernel fills them at init. They work only in
// a test binary (testing.Testing): anywhere else they panic, so a program
// cannot turn a control off through them.
package benchhook

import "testing"

// setEgressGate is filled by the kernel.
var setEgressGate func(server any, on bool)

// RegisterEgressGate is the kernel's: it gives the switch of the egress
// gate of a *kernel.Server.
func RegisterEgressGate(f func(server any, on bool)) { setEgressGate = f }

// SetEgressGate turns the egress gate of server (a *kernel.Server) on or
// off: off, messages reach the client as the server wrote them, unscrubbed
// and uncleaned. It panics outside a test binary.
func SetEgressGate(server any, on bool) {
	if !testing.Testing() {
		panic("benchhook: SetEgressGate outside a test binary")
	}
	setEgressGate(server, on)
}
