//go:build unix

package mcp

import (
	"os/exec"
	"syscall"
)

// isolate puts the server in a process group of its own, so that signals
// reach the children it starts, and a Ctrl-C meant for the host does not
// kill the server behind the client's back.
func isolate(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

func terminate(cmd *exec.Cmd) { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }

func kill(cmd *exec.Cmd) { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
