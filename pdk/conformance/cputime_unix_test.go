//go:build unix

package conformance_test

import (
	"syscall"
	"time"
)

// processCPU is the CPU time the process has used, every thread's.
func processCPU() time.Duration {
	var self syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	return time.Duration(self.Utime.Nano() + self.Stime.Nano())
}
