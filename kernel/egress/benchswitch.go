package egress

import "testing"

// The benchmarks' switch: the module's benchmarks measure the gate against
// the same call with its walk turned off, in one run (docs/performance.md,
// "The egress gate"). The kernel registers it at init. SetGate works only in
// a test binary (testing.Testing): anywhere else it panics, so no program
// can turn the gate off through it.

var setGate func(server any, on bool)

// RegisterGateSwitch is the kernel's: it gives the switch of a
// *kernel.Server's gate.
func RegisterGateSwitch(f func(server any, on bool)) { setGate = f }

// SetGate turns the egress gate of server (a *kernel.Server) on or off:
// off, messages reach the client as the server wrote them, unscrubbed and
// uncleaned. It panics outside a test binary.
func SetGate(server any, on bool) {
	if !testing.Testing() {
		panic("egress: SetGate outside a test binary")
	}
	setGate(server, on)
}
