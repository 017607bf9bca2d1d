//go:build unix

package testsys

import "syscall"

// Mkfifo makes a FIFO at path, readable and writable by its owner.
func Mkfifo(path string) error { return syscall.Mkfifo(path, 0o600) }

// Kill sends SIGKILL to pid.
func Kill(pid int) error { return syscall.Kill(pid, syscall.SIGKILL) }

// Terminate sends SIGTERM to pid.
func Terminate(pid int) error { return syscall.Kill(pid, syscall.SIGTERM) }

// Stop sends SIGSTOP to pid: it stays, answering nothing, until SIGCONT
// or SIGKILL.
func Stop(pid int) error { return syscall.Kill(pid, syscall.SIGSTOP) }

// Exists reports whether pid names a process this one may signal
// (kill(pid, 0)); a zombie still exists.
func Exists(pid int) bool { return syscall.Kill(pid, 0) == nil }
