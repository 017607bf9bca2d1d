package extism

import "encoding/binary"

// Read copies the block at offset out of the kernel's memory; an offset
// that names no block reads as empty. The block stays allocated.
func Read(offset uint64) []byte { return ReadInto(nil, offset) }

// ReadInto is Read copying the block into buf when buf's capacity holds
// it, else into a new slice, as Input does.
func ReadInto(buf []byte, offset uint64) []byte {
	n := length(offset)
	if uint64(cap(buf)) < n {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	var i uint64
	for ; i+8 <= n; i += 8 {
		binary.LittleEndian.PutUint64(buf[i:], loadU64(offset+i))
	}
	for ; i < n; i++ {
		buf[i] = byte(loadU8(offset + i))
	}
	return buf
}

// Free releases the block at offset; 0 and offsets that name no block are
// ignored.
func Free(offset uint64) { free(offset) }

// Take reads the block at offset and frees it, so a loop of host calls
// inside one tool call does not fill the kernel's memory.
func Take(offset uint64) []byte {
	b := Read(offset)
	free(offset)
	return b
}

// Write copies b into a new block and returns its offset (0 when b is
// empty, as the kernel allocates nothing for it). The block is the
// caller's until a host function that frees it is given it.
func Write(b []byte) uint64 {
	n := uint64(len(b))
	offset := alloc(n)
	var i uint64
	for ; i+8 <= n; i += 8 {
		storeU64(offset+i, binary.LittleEndian.Uint64(b[i:]))
	}
	for ; i < n; i++ {
		storeU8(offset+i, uint32(b[i]))
	}
	return offset
}

// Input returns the call's input. It is copied into buf when buf's
// capacity holds it, so a caller that keeps the returned slice for the
// next call reads each input without allocating; otherwise into a new
// slice.
func Input(buf []byte) []byte {
	n := inputLength()
	if uint64(cap(buf)) < n {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	var i uint64
	for ; i+8 <= n; i += 8 {
		binary.LittleEndian.PutUint64(buf[i:], inputLoadU64(i))
	}
	for ; i < n; i++ {
		buf[i] = byte(inputLoadU8(i))
	}
	return buf
}

// Output sets the call's output to b. The host keeps the block.
func Output(b []byte) {
	outputSet(Write(b), uint64(len(b)))
}

// SetError sets the call's failure message: the host fails the call (the
// export should return non-zero; host/ABI.md §1) with msg as the text of
// the tool's error result.
func SetError(msg string) {
	errorSet(Write([]byte(msg)))
}
