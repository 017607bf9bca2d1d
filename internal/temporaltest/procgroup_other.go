//go:build !unix

package temporaltest

import (
	"os"
	"os/exec"
)

// ownGroup does nothing where there are no process groups to signal.
func ownGroup(*exec.Cmd) {}

// stopGroup asks the server to stop (an interrupt), or kills it when
// kill.
func stopGroup(p *os.Process, kill bool) {
	if kill {
		_ = p.Kill()
		return
	}
	_ = p.Signal(os.Interrupt)
}
