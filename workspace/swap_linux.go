package workspace

import (
	"errors"

	"golang.org/x/sys/unix"
)

// canSwap: the kernel can exchange two names at once (renameat2 with
// RENAME_EXCHANGE); a file system that cannot says so at the first try.
const canSwap = true

// exchangeAt swaps the files at the two names.
func exchangeAt(oldFD int, oldName string, newFD int, newName string) error {
	err := unix.Renameat2(oldFD, oldName, newFD, newName, unix.RENAME_EXCHANGE)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EOPNOTSUPP) {
		return errNoSwap
	}
	return err
}
