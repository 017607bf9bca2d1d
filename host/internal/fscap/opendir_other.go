//go:build !unix

package fscap

// openDirFlags: without O_DIRECTORY the read of the entries is what
// refuses a file, and there are no FIFOs to block on.
const openDirFlags = 0
