//go:build unix

package safefile

import (
	"os"
	"syscall"
)

const oNonblock = syscall.O_NONBLOCK

// clearNonblock makes reads of a regular file opened O_NONBLOCK ordinary
// (they never block anyway; this keeps the flag from surprising a caller).
func clearNonblock(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = syscall.SetNonblock(int(fd), false) }); err != nil {
		return err
	}
	return serr
}
