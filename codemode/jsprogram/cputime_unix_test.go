//go:build unix

package jsprogram_test

import "syscall"

// cpuTime is the process's CPU time so far (user and system), in
// nanoseconds: the benchmarks report it beside wall time, which a loaded
// machine stretches far more than it stretches CPU time.
func cpuTime() int64 {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		return 0
	}
	return u.Utime.Nano() + u.Stime.Nano()
}

// minorFaults is the process's minor page faults so far: pages first
// touched, or touched again after the memory was given back.
func minorFaults() int64 {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		return 0
	}
	return u.Minflt
}
