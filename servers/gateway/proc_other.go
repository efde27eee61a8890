//go:build !linux

package gateway

import "os/exec"

// childAttrs: outside Linux there is no parent-death signal; the gateway
// kills its children when it stops.
func childAttrs(*exec.Cmd) {}

func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}
