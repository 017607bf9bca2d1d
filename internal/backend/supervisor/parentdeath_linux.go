package supervisor

import (
	"os/exec"
	"syscall"
)

// dieWithParent asks the kernel to kill the child if the host dies without
// a chance to stop it (SIGKILL, OOM kill), so no backend outlives its host.
// The signal is tied to the OS thread that started the child; the Go
// runtime ends a thread only when a goroutine locked to it exits, and a
// child lost that way is a crash the supervisor already recovers from.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
