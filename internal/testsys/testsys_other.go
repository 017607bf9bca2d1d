//go:build !unix

package testsys

import (
	"errors"
	"fmt"
	"os"
)

// Mkfifo is not supported here.
func Mkfifo(path string) error {
	return fmt.Errorf("mkfifo %s: %w", path, errors.ErrUnsupported)
}

// Kill ends pid at once.
func Kill(pid int) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Kill()
}

// Terminate is not supported here: there is no SIGTERM to send.
func Terminate(pid int) error {
	return fmt.Errorf("terminate %d: %w", pid, errors.ErrUnsupported)
}

// Stop is not supported here.
func Stop(pid int) error {
	return fmt.Errorf("stop %d: %w", pid, errors.ErrUnsupported)
}

// Exists reports whether pid names a process that can be found.
func Exists(pid int) bool {
	_, err := os.FindProcess(pid)
	return err == nil
}
