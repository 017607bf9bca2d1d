// Package kernel is the host's Extism kernel: [Wasm], a small WebAssembly
// module (kernel.c) that holds a guest's Extism memory blocks, its input,
// output and error, and [Memory], the host's checked view of one kernel
// instance.
//
// Every instance of a module that uses Extism memory gets a kernel
// instance of its own, which the module's extism:host/env imports resolve
// to: loads and stores of Extism memory stay in WebAssembly instead of
// exiting to Go for every 8 bytes (RATIONALE.md, "Why is the Extism kernel
// WebAssembly?"). The Go side allocates and reads blocks in the kernel's
// layout, and treats everything in that memory as the guest's: the guest
// can write any byte of it with store_*, so every offset and length read
// back is checked, and every lookup is O(1) whatever the guest wrote.
//
//	var m kernel.Memory
//	m.Init(mod, layout, outputLimit) // mod: an instance of Wasm
//	off, data, ok := m.Alloc(5)
//	copy(data, "hello")
//	b, _ := m.Find(off) // "hello"
package kernel

import (
	"context"
	_ "embed"
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"

	"github.com/tetratelabs/wazero/api"
)

// Wasm is the kernel module (src/kernel.c, rebuilt by `make wasm-testdata`).
//
//go:embed kernel.wasm
var Wasm []byte

// Serves reports whether name is one of the functions of extism:host/env
// a guest imports from the kernel (host/ABI.md §1.1, §1.2): the kernel
// exports it, serving it itself or through its Go imports.
func Serves(name string) bool {
	switch name {
	case "alloc", "free", "length", "length_unsafe",
		"load_u8", "load_u64", "store_u8", "store_u64",
		"input_length", "input_offset", "input_load_u8", "input_load_u64",
		"input_set", "output_set", "output_length", "output_offset",
		"error_set", "error_get", "reset", "memory_bytes",
		"config_get", "var_get", "var_set", "get_log_level",
		"log_trace", "log_debug", "log_info", "log_warn", "log_error",
		"http_request", "http_status_code", "http_headers":
		return true
	}
	return false
}

// The kernel's state struct: the offsets of its fields (kernel.c, struct
// state).
const (
	stInputOff    = 0
	stInputLen    = 8
	stOutputOff   = 16
	stOutputLen   = 24
	stErrorOff    = 32
	stHeapBase    = 40
	stHeapTop     = 48
	stOutputLimit = 56
	stFreeCount   = 64
	stFreeHeads   = 72 // freeClasses heads of the free lists
	stFailCode    = stFreeHeads + 8*freeClasses
	stFailArg     = stFailCode + 8
)

// freeClasses is the number of free lists (kernel.c, CLASSES): list k
// holds the freed blocks whose capacity is in [2^k, 2^(k+1)).
const freeClasses = 32

const (
	// Header is the size of a block's header, {u32 cap; u32 len}, before
	// its data.
	Header    = 8
	blockFree = 0xffffffff // len of a freed block
	// MaxBlock is the largest length a block holds.
	MaxBlock = 0xfffffff0
	pageSize = 65536
)

// Failure is a failure the kernel records in its state before it traps
// (kernel.c, fail): see [Memory.Failure].
type Failure uint32

// The kernel's failures (kernel.c, enum F_*).
const (
	FailLoad      Failure = 1 + iota // load_* outside the blocks
	FailStore                        // store_* outside the blocks
	FailInput                        // input_load_* past the input
	FailOutput                       // output_set past the output limit
	FailNoMemory                     // alloc past the memory limit
	FailInputSet                     // input_set outside the blocks
	FailOutputSet                    // output_set outside the blocks
)

// Layout is where a kernel instance keeps its state and first block: the
// same in every instance of Wasm.
type Layout struct {
	state uint32 // address of the state struct
	heap  uint64 // address of the first block
}

// ReadLayout reads the layout from an instance of Wasm.
func ReadLayout(ctx context.Context, mod api.Module) (Layout, error) {
	state, err := mod.ExportedFunction("kernel_state").Call(ctx)
	if err != nil {
		return Layout{}, err
	}
	heap, err := mod.ExportedFunction("kernel_heap").Call(ctx)
	if err != nil {
		return Layout{}, err
	}
	return Layout{state: uint32(state[0]), heap: heap[0]}, nil
}

// Memory is the host's view of one kernel instance: the Extism memory
// blocks, the call's input, output and error. Its zero value has no
// instance (Module returns nil) until Init.
type Memory struct {
	mod   api.Module
	mem   api.Memory
	state uint32
	base  uint64 // first block header (heap_base)
}

// Init sets up a new kernel instance mod: no blocks, and outputLimit the
// most output_set accepts.
func (k *Memory) Init(mod api.Module, l Layout, outputLimit int64) {
	k.mod, k.mem, k.state, k.base = mod, mod.Memory(), l.state, l.heap
	k.set(stHeapBase, k.base)
	k.set(stOutputLimit, uint64(outputLimit))
	k.Reset()
}

// Module returns the kernel instance, nil before Init.
func (k *Memory) Module() api.Module { return k.mod }

func (k *Memory) get(field uint32) uint64 {
	v, _ := k.mem.ReadUint64Le(k.state + field)
	return v
}

func (k *Memory) set(field uint32, v uint64) { k.mem.WriteUint64Le(k.state+field, v) }

// Reset frees every block and clears the input, output, error and
// failure.
func (k *Memory) Reset() {
	for _, f := range [...]uint32{stInputOff, stInputLen, stOutputOff, stOutputLen, stErrorOff, stFreeCount, stFailCode, stFailArg} {
		k.set(f, 0)
	}
	for c := range uint32(freeClasses) {
		k.set(stFreeHeads+8*c, 0)
	}
	k.set(stHeapTop, k.base)
}

// Failure returns the failure a kernel function recorded as it trapped,
// with its argument (an offset, an index or a length), or ok false when
// none did. Only the kernel writes it: its state lies below the blocks,
// out of reach of a guest's store_*. A trap that ended a call came from
// the kernel exactly when this reports one (Reset clears it before each
// run).
func (k *Memory) Failure() (f Failure, arg uint64, ok bool) {
	if k.mod == nil {
		return 0, 0, false
	}
	code := k.get(stFailCode)
	if code == 0 {
		return 0, 0, false
	}
	return Failure(min(code, 1<<32-1)), k.get(stFailArg), true
}

// view returns the kernel's whole memory.
func (k *Memory) view() []byte {
	b, _ := k.mem.Read(0, k.mem.Size())
	return b
}

// Find returns the data of the live block at off, checked as the kernel
// checks it: in O(1), against the header just before it, since the guest
// can write any header (store_*) and a walk over the blocks would let it
// make every lookup as slow as it likes. The data is a view, valid until
// the guest runs again or a block is allocated.
func (k *Memory) Find(off uint64) ([]byte, bool) {
	mem := k.view()
	top := min(k.get(stHeapTop), uint64(len(mem)))
	if off < k.base+Header || off > top || off&7 != 0 {
		return nil, false
	}
	h := off - Header
	c := uint64(binary.LittleEndian.Uint32(mem[h:]))
	n := binary.LittleEndian.Uint32(mem[h+4:])
	if n == blockFree || uint64(n) > c || c < 8 || c&7 != 0 || top-off < c {
		return nil, false
	}
	return mem[off : off+uint64(n)], true
}

// Free releases the block at off, as the kernel's free does: the last
// block gives its bytes back, another goes on its size class's free list.
// An offset that is not a live block is ignored.
func (k *Memory) Free(off uint64) {
	if _, ok := k.Find(off); !ok {
		return
	}
	mem := k.view()
	h := off - Header
	c := uint64(binary.LittleEndian.Uint32(mem[h:]))
	if off+c == k.get(stHeapTop) {
		k.set(stHeapTop, h)
		return
	}
	class := uint32(63 - bits.LeadingZeros64(c))
	binary.LittleEndian.PutUint32(mem[h+4:], blockFree)
	binary.LittleEndian.PutUint64(mem[off:], k.get(stFreeHeads+8*class))
	k.set(stFreeHeads+8*class, h)
	k.set(stFreeCount, k.get(stFreeCount)+1)
}

// Alloc returns a new block of n bytes at the end of the blocks (0 and no
// data for n = 0), growing the kernel's memory as needed. false means
// the memory could not grow: the module's memory limit (the kernel's
// memory counts against it) or the largest block.
func (k *Memory) Alloc(n uint64) (uint64, []byte, bool) {
	if n == 0 {
		return 0, nil, true
	}
	if n > MaxBlock {
		return 0, nil, false
	}
	c := (n + 7) &^ 7
	h := k.get(stHeapTop)
	end := h + Header + c
	if size := uint64(k.mem.Size()); end > size {
		pages := (end - size + pageSize - 1) / pageSize
		if pages > 1<<16 {
			return 0, nil, false
		}
		if _, ok := k.mem.Grow(uint32(pages)); !ok {
			return 0, nil, false
		}
	}
	mem := k.view()
	binary.LittleEndian.PutUint32(mem[h:], uint32(c))
	binary.LittleEndian.PutUint32(mem[h+4:], uint32(n))
	k.set(stHeapTop, end)
	off := h + Header
	return off, mem[off : off+n], true
}

// AllocEmpty returns a new block of length 0, for a result where offset 0
// means "none" (kv_get of an empty value).
func (k *Memory) AllocEmpty() (uint64, bool) {
	off, _, ok := k.Alloc(1)
	if ok {
		binary.LittleEndian.PutUint32(k.view()[off-Header+4:], 0)
	}
	return off, ok
}

// SetInput places the call input as the first block (the kernel was just
// reset) and returns it to be filled; false as Alloc.
func (k *Memory) SetInput(n int) ([]byte, bool) {
	off, data, ok := k.Alloc(uint64(n))
	if !ok {
		return nil, false
	}
	k.set(stInputOff, off)
	k.set(stInputLen, uint64(n))
	return data, true
}

// InputLen is the length of the call input.
func (k *Memory) InputLen() uint64 { return k.get(stInputLen) }

// ErrOutputLimit is Output's error for an output past its limit.
var ErrOutputLimit = errors.New("kernel: output past its limit")

// Output returns the call's output (a view, valid until the instance runs
// again) and its error message when it set one. An output past limit is
// ErrOutputLimit; one outside the blocks an error saying so.
func (k *Memory) Output(limit int64) (out, errMsg []byte, err error) {
	if e := k.get(stErrorOff); e != 0 {
		errMsg, _ = k.Find(e)
	}
	off, n := k.get(stOutputOff), k.get(stOutputLen)
	if n == 0 {
		return nil, errMsg, nil
	}
	if int64(n) > limit || n > MaxBlock {
		return nil, errMsg, ErrOutputLimit
	}
	mem := k.view()
	if off > uint64(len(mem)) || n > uint64(len(mem))-off {
		return nil, errMsg, fmt.Errorf("output_set: offset %d out of bounds of Extism memory", off)
	}
	return mem[off : off+n], errMsg, nil
}
