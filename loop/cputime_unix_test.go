//go:build unix

package loop_test

import (
	"syscall"
	"time"
)

// cpuTime returns the user+system CPU time of the process.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
