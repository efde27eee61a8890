package gateway

import (
	"os/exec"
	"syscall"
)

// childAttrs puts the child in its own process group (so killing it kills
// what it spawned, such as npx's node) and has the kernel kill it when the
// gateway dies, even by SIGKILL.
func childAttrs(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// killGroup kills the child's process group.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Process.Kill()
	}
}
