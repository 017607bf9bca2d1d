//go:build wasip1

package main

import "encoding/binary"

// The Extism kernel functions the engine uses (host/ABI.md §1.1). Blocks
// live in host memory and are copied across eight bytes at a time.

//go:wasmimport extism:host/env input_length
func inputLength() uint64

//go:wasmimport extism:host/env input_load_u64
func inputLoadU64(i uint64) uint64

//go:wasmimport extism:host/env input_load_u8
func inputLoadU8(i uint64) uint32

//go:wasmimport extism:host/env alloc
func alloc(n uint64) uint64

//go:wasmimport extism:host/env free
func free(off uint64)

//go:wasmimport extism:host/env length
func length(off uint64) uint64

//go:wasmimport extism:host/env load_u64
func loadU64(off uint64) uint64

//go:wasmimport extism:host/env load_u8
func loadU8(off uint64) uint32

//go:wasmimport extism:host/env store_u64
func storeU64(off, v uint64)

//go:wasmimport extism:host/env store_u8
func storeU8(off uint64, v uint32)

//go:wasmimport extism:host/env output_set
func outputSet(off, n uint64)

//go:wasmimport extism:host/env error_set
func errorSet(off uint64)

//go:wasmimport extism:host/env config_get
func configGet(key uint64) uint64

func readInput() []byte {
	n := inputLength()
	b := make([]byte, n)
	var i uint64
	for ; i+8 <= n; i += 8 {
		binary.LittleEndian.PutUint64(b[i:], inputLoadU64(i))
	}
	for ; i < n; i++ {
		b[i] = byte(inputLoadU8(i))
	}
	return b
}

// writeBlock copies b into a new block and returns its offset.
func writeBlock(b []byte) uint64 {
	off := alloc(uint64(len(b)))
	n := uint64(len(b))
	var i uint64
	for ; i+8 <= n; i += 8 {
		storeU64(off+i, binary.LittleEndian.Uint64(b[i:]))
	}
	for ; i < n; i++ {
		storeU8(off+i, uint32(b[i]))
	}
	return off
}

// readBlock copies a block out of host memory.
func readBlock(off uint64) []byte {
	n := length(off)
	b := make([]byte, n)
	var i uint64
	for ; i+8 <= n; i += 8 {
		binary.LittleEndian.PutUint64(b[i:], loadU64(off+i))
	}
	for ; i < n; i++ {
		b[i] = byte(loadU8(off + i))
	}
	return b
}

func config(key string) (string, bool) {
	k := writeBlock([]byte(key))
	off := configGet(k)
	free(k)
	if off == 0 {
		return "", false
	}
	v := readBlock(off)
	free(off)
	return string(v), true
}
