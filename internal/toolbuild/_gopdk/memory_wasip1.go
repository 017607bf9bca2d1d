//go:build wasip1

package pdk

//lint:file-ignore U1000 describe and call are exported to the host by //go:wasmexport, which staticcheck does not follow, so it thinks they and everything only they use are unused.

import "encoding/binary"

// readBlock copies the kernel block at offset into a new slice. Eight
// bytes cross per host call; the tail goes byte by byte.
func readBlock(offset uint64) []byte {
	n := extismLength(offset)
	buf := make([]byte, n)
	var i uint64
	for ; i+8 <= n; i += 8 {
		binary.LittleEndian.PutUint64(buf[i:], extismLoadU64(offset+i))
	}
	for ; i < n; i++ {
		buf[i] = byte(extismLoadU8(offset + i))
	}
	return buf
}

// takeBlock reads the kernel block at offset and frees it, so a loop of
// host calls inside one tool call does not fill the kernel's memory.
func takeBlock(offset uint64) []byte {
	b := readBlock(offset)
	extismFree(offset)
	return b
}

// writeBlock copies b into a new kernel block and returns its offset. The
// caller hands it to the host: a block the host keeps (the output, an HTTP
// request) is the host's from then on; one the host only reads (a kv key)
// the caller frees after the call.
func writeBlock(b []byte) uint64 {
	n := uint64(len(b))
	offset := extismAlloc(n)
	var i uint64
	for ; i+8 <= n; i += 8 {
		extismStoreU64(offset+i, binary.LittleEndian.Uint64(b[i:]))
	}
	for ; i < n; i++ {
		extismStoreU8(offset+i, uint32(b[i]))
	}
	return offset
}

// maxKeptInput is the largest input buffer kept for the next call.
const maxKeptInput = 1 << 20

var inputBuf []byte

// readInput returns the call's input in a buffer reused across calls; the
// dispatcher copies what it keeps, so reuse is safe.
func readInput() []byte {
	n := extismInputLength()
	if uint64(cap(inputBuf)) < n {
		inputBuf = make([]byte, n)
	}
	buf := inputBuf[:n]
	var i uint64
	for ; i+8 <= n; i += 8 {
		binary.LittleEndian.PutUint64(buf[i:], extismInputLoadU64(i))
	}
	for ; i < n; i++ {
		buf[i] = byte(extismInputLoadU8(i))
	}
	return buf
}

// releaseInput drops an input buffer too large to keep around.
func releaseInput() {
	if cap(inputBuf) > maxKeptInput {
		inputBuf = nil
	}
}
