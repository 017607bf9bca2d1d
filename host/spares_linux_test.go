package host

import (
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A spare keeps resident, zeroed in place, as much memory as the module's
// instances start with (the next instance touches it all at once: 30 MB
// for the JavaScript engine), and gives back the pages beyond it, which a
// call grew into.
func TestSpareKeepsWhatInstancesStartWith(t *testing.T) {
	const mib = 1 << 20
	buf, ok := reserve(64 * mib)
	if !ok {
		t.Skip("no reservation on this system")
	}
	s := &spares{max: 2}
	defer s.free()
	for i := 0; i < 40*mib; i += 4096 {
		buf[i] = 7
	}
	if !s.put(false, spare{buf: buf, used: 40 * mib, region: true}, 24*mib) {
		t.Fatal("the spare was not kept")
	}
	sp, ok := s.take(false, 1*mib, 24*mib, 0)
	if !ok {
		t.Fatal("no spare")
	}
	resident := func(off int) bool {
		vec := make([]byte, 1)
		if _, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&sp.buf[off])), 4096, uintptr(unsafe.Pointer(&vec[0]))); errno != 0 {
			t.Fatal(errno)
		}
		return vec[0]&1 == 1
	}
	// Residency first: reading a page given back maps it again.
	for _, off := range []int{0, 8 * mib, 20 * mib, 24*mib - 4096} {
		if !resident(off) {
			t.Errorf("page at %.1f MiB given back: the next instance faults it in again", float64(off)/mib)
		}
	}
	for _, off := range []int{24 * mib, 39 * mib} {
		if resident(off) {
			t.Errorf("page at %d MiB kept resident past what instances start with", off/mib)
		}
	}
	for off := 0; off < 40*mib; off += 4096 {
		if sp.buf[off] != 0 {
			t.Fatalf("byte %d not zeroed", off)
		}
	}
}
