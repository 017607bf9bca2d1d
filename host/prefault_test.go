//go:build linux

package host

import (
	"context"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// residentPages counts the pages of b the system holds in memory.
func residentPages(t *testing.T, b []byte) (resident, pages int) {
	t.Helper()
	vec := make([]byte, (len(b)+osPage-1)/osPage)
	_, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(len(b)), uintptr(unsafe.Pointer(unsafe.SliceData(vec))))
	if errno != 0 {
		t.Fatalf("mincore: %v", errno)
	}
	for _, v := range vec {
		if v&1 != 0 {
			resident++
		}
	}
	return resident, len(vec)
}

// TestGuestMemoryIsFaultedInByTheHost: a new instance's memory, and what
// memory.grow adds to it, are resident before the guest runs, so the
// guest never takes a page fault in machine code, where a garbage
// collection cannot stop it (bulkfill.wasm held collections up for
// 200-500 ms with one memory.fill over fresh pages).
func TestGuestMemoryIsFaultedInByTheHost(t *testing.T) {
	t.Parallel()
	h, _ := newTestHost(t, Options{})
	l := load(t, h, "bulkfill.wasm", Module{Limits: Limits{Memory: 64 << 20}})
	inst, _, err := l.acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer l.releaseInstance(inst, false)
	m := inst.linear
	if m.region == nil {
		t.Skip("no address space reservation on this system: the memory is in the Go heap")
	}
	if r, n := residentPages(t, m.buf); r != n || n != 768*pageSize/osPage {
		t.Fatalf("%d of the %d pages of the initial 48 MiB are resident, want all of %d", r, n, 768*pageSize/osPage)
	}
	old := len(m.buf)
	if m.Reallocate(uint64(old+16*pageSize)) == nil {
		t.Fatal("growing by 1 MiB under a 64 MiB limit was refused")
	}
	if r, n := residentPages(t, m.buf[old:]); r != n || n != 16*pageSize/osPage {
		t.Fatalf("%d of the %d grown pages are resident", r, n)
	}
	// What lies past the memory's size stays unfaulted.
	if r, _ := residentPages(t, m.region[len(m.buf):len(m.buf)+pageSize]); r != 0 {
		t.Fatalf("%d pages past the memory's end are resident", r)
	}
}
