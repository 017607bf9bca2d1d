//go:build !linux

package supervisor

import "os/exec"

// dieWithParent does nothing where the kernel offers no parent-death
// signal; Close still stops every child on a clean shutdown.
func dieWithParent(*exec.Cmd) {}
