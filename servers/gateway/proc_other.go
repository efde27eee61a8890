//go:build !linux

package gateway

import "os/exec"

// box is what an upstream child was started in: outside Linux, nothing.
// There is no parent-death signal, no cgroup and no subreaper: the gateway
// kills the child itself when it stops (not when it is killed), and what
// the child started is left to the child.
type box struct{}

func childAttrs(*exec.Cmd, bool) (*box, func()) { return &box{}, func() {} }

func (*box) retryable() bool                                  { return false }
func (*box) confineStarted(interface{ Warn(string, ...any) }) {}
func (*box) release()                                         {}

func track(int, bool) {}
func sweepAdopted()   {}

func (*box) killAll(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}
