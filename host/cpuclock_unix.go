//go:build unix

package host

import (
	"syscall"
	"time"
)

// selfCPU returns the CPU time (user and system) this process has used.
func selfCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
