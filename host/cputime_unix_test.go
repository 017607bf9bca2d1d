//go:build unix

package host

import (
	"syscall"
	"time"
)

// processCPU returns the CPU time (user and system) used by this process
// and by its children that have been waited for.
func processCPU() time.Duration {
	var self, children syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children)
	total := self.Utime.Nano() + self.Stime.Nano() + children.Utime.Nano() + children.Stime.Nano()
	return time.Duration(total)
}
