//go:build unix

package fscap

import "syscall"

// openDirFlags open a directory for reading its entries and nothing else:
// a FIFO swapped in for it cannot block the open, and a file is refused.
const openDirFlags = syscall.O_NONBLOCK | syscall.O_DIRECTORY
