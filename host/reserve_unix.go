//go:build linux || darwin || freebsd

package host

import "golang.org/x/sys/unix"

// reserve maps n bytes of address space for a linear memory: pages cost
// nothing until the guest touches them, the region never moves as the
// memory grows, and it is outside the Go heap, so neither copies nor the
// garbage collector's pacing depend on guest memory.
func reserve(n int) ([]byte, bool) {
	b, err := unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON|mapNoReserve)
	if err != nil {
		return nil, false
	}
	return b, true
}

// unreserve unmaps a region of reserve.
func unreserve(b []byte) { _ = unix.Munmap(b) }

// discard zeroes the region's first n bytes and gives their pages back to
// the system.
func discard(b []byte, n int) {
	if n <= 0 {
		return
	}
	if n < 256<<10 {
		clear(b[:n])
		return
	}
	n = (n + unix.Getpagesize() - 1) &^ (unix.Getpagesize() - 1)
	if unix.Madvise(b[:min(n, len(b))], unix.MADV_DONTNEED) != nil {
		clear(b[:min(n, len(b))])
	}
}
