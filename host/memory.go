package host

import (
	"fmt"
	"os"
	"sync"

	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
)

// pageSize is a WebAssembly page.
const pageSize = 65536

// linearMemory backs one memory of an instance (the guest's, or its
// kernel's, which holds the Extism blocks) and refuses to grow past the
// instance's memory budget, which the two share. A refused growth makes
// memory.grow return -1; the host then reports the memory limit whatever
// the guest does next (usually a trap).
//
// Where the system allows, the memory is a region of address space as
// large as the limit, reserved once (see reserve): growing it never copies
// and the pages the guest never touches cost nothing, so the host memory a
// call holds is the memory the guest uses. Elsewhere it grows in the Go
// heap, geometrically.
type linearMemory struct {
	inst   *instance
	buf    []byte // the memory: len is its size
	region []byte // the reservation buf lies in, nil in the Go heap
	kernel bool
	// restored is the size of the snapshot restore will copy over the
	// memory (0 without one): a spare need not be zeroed below it.
	restored int
	// shrinking is set while reset shrinks the memory to shrinkTo bytes
	// (see shrink).
	shrinking bool
	shrinkTo  int
}

// memoryAllocator gives the instance being instantiated its memory.
type memoryAllocator struct {
	inst     *instance
	kernel   bool
	restored int // linearMemory.restored
}

var _ experimental.MemoryAllocator = memoryAllocator{}

// Allocate implements experimental.MemoryAllocator.
func (a memoryAllocator) Allocate(_, _ uint64) experimental.LinearMemory {
	m := &linearMemory{inst: a.inst, kernel: a.kernel, restored: a.restored}
	if a.kernel {
		a.inst.kmem = m
	} else {
		a.inst.linear = m
	}
	return m
}

// spares are the memories of a module's closed instances, kept for its
// next instances: instantiating a Go guest would otherwise allocate (and
// fault in) megabytes per instance. Only instances the host closed itself
// give their memory back (see instance.close); it is zeroed when taken.
type spares struct {
	mu     sync.Mutex
	bufs   [2][]spare // guest, kernel
	max    int
	closed bool // free ran: nothing more is kept
}

type spare struct {
	buf    []byte // full capacity (the region, for a reservation)
	used   int    // bytes the last instance could have written
	region bool
}

func kind(kernel bool) int {
	if kernel {
		return 1
	}
	return 0
}

// spareClear is how much of a spare take zeroes in place at least; it
// zeroes as much as the module's instances start with (memHint) when that
// is more.
const spareClear = 8 << 20

// take returns a zeroed spare of at least size bytes, or ok false. The
// first max(spareClear, start) bytes are zeroed in place, their pages
// kept; the rest the last instance used goes back to the system. The
// first restored bytes are left as they are: a snapshot's copy replaces
// all of them before the guest runs (see restore).
func (s *spares) take(kernel bool, size uint64, start int64, restored int) (sp spare, ok bool) {
	s.mu.Lock()
	list := s.bufs[kind(kernel)]
	for i, sp := range list {
		if uint64(cap(sp.buf)) < size {
			continue
		}
		list[i] = list[len(list)-1]
		s.bufs[kind(kernel)] = list[:len(list)-1]
		s.mu.Unlock()
		// Zeroing pages that stay resident costs far less than giving
		// them back and faulting them in again, for the memory an
		// instance starts with (the next one touches all of it at once:
		// a Go guest's runtime and heap, 30 MB for the JavaScript
		// engine, whose faults cost 13 µs a page); beyond that the pages
		// go back (zeroing them would make memory grown but never
		// touched resident).
		keep := min(sp.used, max(spareClear, int(start)))
		clear(sp.buf[min(restored, keep):keep])
		if sp.used > keep {
			if sp.region {
				discard(sp.buf[keep:], sp.used-keep)
			} else {
				clear(sp.buf[keep:sp.used])
			}
		}
		return sp, true
	}
	s.mu.Unlock()
	return spare{}, false
}

// put keeps a memory for a later instance, unless enough are kept already
// or (in the Go heap) it is far larger than an instance needs to start: a
// call that grew its memory to the limit must not pin that much for every
// later instance. It reports whether it kept it.
func (s *spares) put(kernel bool, sp spare, typical int64) bool {
	if !sp.region && int64(cap(sp.buf)) > max(4*typical, 1<<20) {
		return false
	}
	if sp.region && int64(sp.used) > max(4*typical, 1<<20) {
		// Give the pages a large call touched back now, not when reused.
		discard(sp.buf, sp.used)
		sp.used = 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if list := s.bufs[kind(kernel)]; len(list) < s.max && !s.closed {
		s.bufs[kind(kernel)] = append(list, sp)
		return true
	}
	return false
}

// free unmaps every kept reservation (the module was unloaded).
func (s *spares) free() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	for k, list := range s.bufs {
		for _, sp := range list {
			if sp.region {
				unreserve(sp.buf)
			}
		}
		s.bufs[k] = nil
	}
}

// charged is the part of the memory the module's limit counts: all of the
// guest's, and the kernel's beyond its initial page (the host's fixed cost).
func (m *linearMemory) charged(size int64) int64 {
	if m.kernel {
		return max(0, size-m.inst.l.h.kernel.initial)
	}
	return size
}

// Reallocate grows the memory to size bytes, or returns nil when that
// would pass the limit.
func (m *linearMemory) Reallocate(size uint64) []byte {
	if m.shrinking {
		return m.buf[:m.shrinkTo]
	}
	inst := m.inst
	// memory.grow runs here, in Go: the watchdog counts the time (the
	// pages faulted in, a copy in the heap) as the host's.
	defer inst.leaveGo(inst.enterGo("memory.grow"))
	other := inst.kmem
	if m.kernel {
		other = inst.linear
	}
	if m.charged(int64(size))+other.chargedSize() > inst.limits.Memory {
		// The initial size was checked against the limit at load time, so
		// only memory.grow (or a kernel allocation) can get here.
		inst.call.exceeded = limitErr(LimitMemory, inst.limits.Memory)
		return nil
	}
	if t := inst.tree; t != nil {
		delta := m.charged(int64(size)) - m.chargedSize()
		if !t.charge(delta) {
			inst.call.exceeded = limitErr(LimitCallTreeMemory, t.limit)
			return nil
		}
		inst.treeCharged += delta
	}
	if m.buf == nil && m.region == nil {
		m.first(size)
	}
	old := len(m.buf)
	switch {
	case m.region != nil:
		m.buf = m.region[:size]
	case uint64(cap(m.buf)) >= size:
		m.buf = m.buf[:size]
	default:
		// Grow geometrically, as append would, but never past the limit:
		// a module growing one page at a time must not copy its memory
		// on every page. A new guest memory starts at the size earlier
		// instances of the module reached, so a Go guest's runtime
		// start-up does not copy its heap several times.
		c := max(uint64(cap(m.buf))*2, size)
		if !m.kernel && m.buf == nil {
			c = max(c, uint64(inst.l.memHint.Load()))
		}
		if lim := uint64(inst.limits.Memory); c > lim {
			c = max(lim, size)
		}
		nb := make([]byte, size, c)
		copy(nb, m.buf)
		m.buf = nb
	}
	// Below restored the snapshot's copy, in Go too, writes every page.
	m.prefault(max(old, m.restored))
	inst.notePeak()
	return m.buf
}

// osPage is the system's page size, the unit prefault touches.
var osPage = os.Getpagesize()

// prefault writes to every page of b[from:], which is new memory (zero,
// so the zeros it writes change nothing), to fault those pages in here,
// in Go, rather than in the guest's machine code. A page fault costs a few
// microseconds (13 µs on the CI's virtual machine), and while the guest
// runs machine code the Go scheduler cannot stop it: one memory.fill over
// 48 MiB of fresh memory, charged fuel as the 1 ms it takes on resident
// pages, held every garbage collection of the process up for 200 ms there
// (500 ms under load), and a loop writing one byte per page could do as
// much between two yields. Here a collection may preempt the loop at any
// page. The cost: memory the guest has but never touches is resident too
// (up to its memory limit, which bounds this loop's time), and starting an
// instance with fresh memory faults its initial memory in; the spares keep
// the pages for the next instance. Shutting the host down or stopping the
// call ends the loop early: the guest then faults the rest itself, until
// its next yield stops it.
func (m *linearMemory) prefault(from int) {
	inst := m.inst
	for p := from; p < len(m.buf); p += osPage {
		m.buf[p] = 0
		if p&(prefaultCheck-1) == 0 && (inst.stopRequested.Load() || inst.l.h.shut.Load()) {
			return
		}
	}
}

// prefaultCheck is how often (in bytes) prefault checks for a stop.
const prefaultCheck = 4 << 20

// first gives a new memory its backing: a spare, else a new reservation
// as large as the limit (plus the kernel's uncharged start), else nothing
// (the Go heap then).
func (m *linearMemory) first(size uint64) {
	inst := m.inst
	start := inst.l.memHint.Load()
	if m.kernel {
		start = 0
	}
	if sp, ok := inst.l.spares.take(m.kernel, size, start, m.restored); ok {
		if sp.region {
			m.region = sp.buf
		} else {
			m.buf = sp.buf[:0]
		}
		return
	}
	n := inst.limits.Memory
	if m.kernel {
		n += inst.l.h.kernel.initial
	}
	n = (n + pageSize - 1) &^ (pageSize - 1)
	if uint64(n) < size {
		return
	}
	if r, ok := reserve(int(n)); ok {
		m.region = r
	}
}

// Free drops the memory, giving it back to the module's spares when the
// host itself closed the instance: then nothing can run in it any more. A
// module the runtime closed while its guest still runs (proc_exit,
// Host.Close) keeps its reservation until that call returns (see
// instance.invoke); memory in the Go heap is left to the garbage
// collector.
func (m *linearMemory) Free() {
	inst := m.inst
	switch {
	case m.region != nil && inst.recycle:
		typical := inst.l.memHint.Load()
		if m.kernel {
			typical = inst.l.h.kernel.initial
		}
		if !inst.l.spares.put(m.kernel, spare{buf: m.region, used: len(m.buf), region: true}, typical) {
			unreserve(m.region)
		}
	case m.region != nil:
		inst.unmapLater(m.region)
	case m.buf != nil && inst.recycle:
		typical := inst.l.memHint.Load()
		if m.kernel {
			typical = inst.l.h.kernel.initial
		}
		inst.l.spares.put(m.kernel, spare{buf: m.buf[:cap(m.buf)], used: len(m.buf)}, typical)
	}
	m.buf, m.region = nil, nil
}

// shrink makes the memory of mod, which m backs, n bytes long again (n
// no more than its size), for reset: the bytes past n are zeroed (or
// their pages given back), so growing again shows zeros as growing a new
// instance's memory does. wazero has no way to shrink a memory; its Grow
// is the one way to make its compiled code see a new length (it asks the
// allocator for the new buffer, then tells the code its base and length),
// so shrink asks it to grow by a page while m answers with the shorter
// buffer. It fails, leaving the instance to be closed, when the runtime
// refuses to grow (the memory is at its declared maximum) or does not
// take the buffer as it is (TestResetRestoresEveryByte checks the size the
// runtime reports, TestResetGrownMemory the one the guest sees).
func (m *linearMemory) shrink(mem api.Memory, n int) error {
	old := len(m.buf)
	if old == n {
		return nil
	}
	if n > old || n < 0 || n%pageSize != 0 {
		return fmt.Errorf("%w: shrinking a memory of %d bytes to %d", errSnapshot, old, n)
	}
	grown := m.buf[n:old]
	m.shrinking, m.shrinkTo = true, n
	_, ok := mem.Grow(1)
	m.shrinking = false
	if !ok || len(m.buf) != old || mem.Size() != uint32(n) {
		return fmt.Errorf("%w: the runtime did not shrink a memory of %d bytes to %d", errSnapshot, old, n)
	}
	m.buf = m.buf[:n]
	// Zeroing pages kept resident costs less than giving them back and
	// faulting them in again (see spares.take), up to spareClear.
	keep := min(len(grown), spareClear)
	clear(grown[:keep])
	if len(grown) > keep {
		if m.region != nil {
			discard(grown[keep:], len(grown)-keep)
		} else {
			clear(grown[keep:])
		}
	}
	return nil
}

// size is the current length of the memory.
func (m *linearMemory) size() int64 {
	if m == nil {
		return 0
	}
	return int64(len(m.buf))
}

func (m *linearMemory) chargedSize() int64 {
	if m == nil {
		return 0
	}
	return m.charged(int64(len(m.buf)))
}
