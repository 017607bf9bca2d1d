package host

import (
	"sync"

	"github.com/tetratelabs/wazero/experimental"
)

// linearMemory backs one memory of an instance (the guest's, or its
// kernel's, which holds the Extism blocks) and refuses to grow past the
// instance's memory budget, which the two share. A refused growth makes
// memory.grow return -1; the host then reports the memory limit whatever
// the guest does next (usually a trap).
type linearMemory struct {
	inst   *instance
	buf    []byte
	kernel bool
}

// memoryAllocator gives the instance being instantiated its memory.
type memoryAllocator struct {
	inst   *instance
	kernel bool
}

var _ experimental.MemoryAllocator = memoryAllocator{}

// Allocate implements experimental.MemoryAllocator.
func (a memoryAllocator) Allocate(_, _ uint64) experimental.LinearMemory {
	m := &linearMemory{inst: a.inst, kernel: a.kernel}
	if a.kernel {
		a.inst.kmem = m
	} else {
		a.inst.linear = m
	}
	return m
}

// spares are the memory buffers of a module's closed instances, kept for
// its next instances: instantiating a Go guest would otherwise allocate
// (and the garbage collector then scan and free) megabytes per instance.
// Only instances the host closed itself give their buffers back (see
// instance.close); a buffer is zeroed when it is taken.
type spares struct {
	mu   sync.Mutex
	bufs [2][]spare // guest, kernel
	max  int
}

type spare struct {
	buf  []byte // full capacity
	used int    // bytes the last instance could have written
}

func kind(kernel bool) int {
	if kernel {
		return 1
	}
	return 0
}

// take returns a zeroed buffer of length size, or nil.
func (s *spares) take(kernel bool, size uint64) []byte {
	s.mu.Lock()
	list := s.bufs[kind(kernel)]
	for i, sp := range list {
		if uint64(cap(sp.buf)) < size {
			continue
		}
		list[i] = list[len(list)-1]
		s.bufs[kind(kernel)] = list[:len(list)-1]
		s.mu.Unlock()
		clear(sp.buf[:sp.used])
		return sp.buf[:size]
	}
	s.mu.Unlock()
	return nil
}

// put keeps buf for a later instance, unless enough are kept already or
// it is far larger than an instance needs to start (a call that grew its
// memory to the limit must not pin that much for every later instance).
func (s *spares) put(kernel bool, buf []byte, typical int64) {
	if int64(cap(buf)) > max(4*typical, 1<<20) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if list := s.bufs[kind(kernel)]; len(list) < s.max {
		s.bufs[kind(kernel)] = append(list, spare{buf[:cap(buf)], len(buf)})
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
	inst := m.inst
	other := inst.kmem
	if m.kernel {
		other = inst.linear
	}
	if m.charged(int64(size))+other.chargedSize() > inst.limits.Memory {
		// The initial size was checked against the limit at load time, so
		// only memory.grow (or a kernel allocation) can get here.
		inst.exceeded = limitErr(LimitMemory, inst.limits.Memory)
		return nil
	}
	if t := inst.tree; t != nil {
		delta := m.charged(int64(size)) - m.chargedSize()
		if !t.charge(delta) {
			inst.exceeded = limitErr(LimitCallTreeMemory, t.limit)
			return nil
		}
		inst.treeCharged += delta
	}
	var spare []byte
	if m.buf == nil {
		spare = inst.l.spares.take(m.kernel, size)
	}
	switch {
	case spare != nil:
		m.buf = spare
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
	inst.notePeak()
	return m.buf
}

// Free drops the memory, giving the buffer back to the module's spares
// when the host itself closed the instance: then nothing can run in it
// any more. (A module closed by the runtime, on Host.Close, may still be
// running a guest: its buffer is left to the garbage collector.)
func (m *linearMemory) Free() {
	if m.inst.recycle && m.buf != nil {
		typical := m.inst.l.memHint.Load()
		if m.kernel {
			typical = m.inst.l.h.kernel.initial
		}
		m.inst.l.spares.put(m.kernel, m.buf, typical)
	}
	m.buf = nil
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
