package host

import "github.com/tetratelabs/wazero/experimental"

// linearMemory backs one instance's wasm memory and refuses to grow past
// the instance's memory budget, which it shares with the Extism blocks. A
// refused growth makes memory.grow return -1; the host then reports the
// memory limit whatever the guest does next (usually a trap).
type linearMemory struct {
	inst *instance
	buf  []byte
}

var _ experimental.MemoryAllocator = (*instance)(nil)

// Allocate implements experimental.MemoryAllocator for the instance.
func (inst *instance) Allocate(_, _ uint64) experimental.LinearMemory {
	inst.linear = &linearMemory{inst: inst}
	return inst.linear
}

// Reallocate grows the memory to size bytes, or returns nil when that
// would pass the limit.
func (m *linearMemory) Reallocate(size uint64) []byte {
	inst := m.inst
	if int64(size)+int64(len(inst.k.mem)) > inst.limits.Memory {
		// The initial size was checked against the limit at load time, so
		// only memory.grow can get here.
		inst.exceeded = limitErr(LimitMemory, inst.limits.Memory)
		return nil
	}
	if uint64(cap(m.buf)) >= size {
		m.buf = m.buf[:size]
	} else {
		// Grow geometrically, as append would, but never past the limit:
		// a module growing one page at a time must not copy its memory
		// on every page.
		c := uint64(cap(m.buf)) * 2
		if c < size {
			c = size
		}
		if lim := uint64(inst.limits.Memory); c > lim {
			c = lim
		}
		nb := make([]byte, size, c)
		copy(nb, m.buf)
		m.buf = nb
	}
	inst.notePeak()
	return m.buf
}

// Free drops the memory.
func (m *linearMemory) Free() { m.buf = nil }

// size is the current length of the linear memory.
func (m *linearMemory) size() int64 {
	if m == nil {
		return 0
	}
	return int64(len(m.buf))
}
