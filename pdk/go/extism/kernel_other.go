//go:build !wasip1

package extism

import "sync"

// kernel stands in for the host's kernel outside WebAssembly: the blocks
// in one slice (offset 0 is never a block), the call's input, output and
// error, and the configuration. Freed blocks are not reused. The package's
// tests set and read it.
var kernel struct {
	sync.Mutex
	mem    []byte
	blocks map[uint64]uint64 // offset → length of each live block
	input  []byte
	output []byte
	err    []byte
	config map[string]string
	// tools answers tool_call; when nil, tool_call panics as a host
	// traps a module granted no tool.
	tools func(request []byte) []byte
}

func alloc(size uint64) uint64 {
	if size == 0 {
		return 0
	}
	kernel.Lock()
	defer kernel.Unlock()
	if kernel.mem == nil {
		kernel.mem = make([]byte, 1)
		kernel.blocks = map[uint64]uint64{}
	}
	offset := uint64(len(kernel.mem))
	kernel.mem = append(kernel.mem, make([]byte, size)...)
	kernel.blocks[offset] = size
	return offset
}

func free(offset uint64) {
	kernel.Lock()
	defer kernel.Unlock()
	delete(kernel.blocks, offset)
}

func length(offset uint64) uint64 {
	kernel.Lock()
	defer kernel.Unlock()
	return kernel.blocks[offset]
}

// bytesAt returns n bytes of the kernel's memory at offset, panicking as
// the kernel traps when they are not all inside one live block.
func bytesAt(offset, n uint64) []byte {
	for start, size := range kernel.blocks {
		if offset >= start && offset+n <= start+size {
			return kernel.mem[offset : offset+n]
		}
	}
	panic("extism: load or store outside the blocks")
}

func loadU8(offset uint64) uint32 {
	kernel.Lock()
	defer kernel.Unlock()
	return uint32(bytesAt(offset, 1)[0])
}

func loadU64(offset uint64) uint64 {
	kernel.Lock()
	defer kernel.Unlock()
	b := bytesAt(offset, 8)
	var v uint64
	for i := 7; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	return v
}

func storeU8(offset uint64, v uint32) {
	kernel.Lock()
	defer kernel.Unlock()
	bytesAt(offset, 1)[0] = byte(v)
}

func storeU64(offset, v uint64) {
	kernel.Lock()
	defer kernel.Unlock()
	b := bytesAt(offset, 8)
	for i := range b {
		b[i] = byte(v >> (8 * i))
	}
}

func inputLength() uint64 {
	kernel.Lock()
	defer kernel.Unlock()
	return uint64(len(kernel.input))
}

func inputLoadU8(i uint64) uint32 {
	kernel.Lock()
	defer kernel.Unlock()
	return uint32(kernel.input[i])
}

func inputLoadU64(i uint64) uint64 {
	kernel.Lock()
	defer kernel.Unlock()
	b := kernel.input[i : i+8]
	var v uint64
	for j := 7; j >= 0; j-- {
		v = v<<8 | uint64(b[j])
	}
	return v
}

func outputSet(offset, size uint64) {
	kernel.Lock()
	defer kernel.Unlock()
	kernel.output = nil
	if size > 0 {
		kernel.output = append([]byte(nil), bytesAt(offset, size)...)
	}
}

func errorSet(offset uint64) {
	kernel.Lock()
	defer kernel.Unlock()
	kernel.err = nil
	if n := kernel.blocks[offset]; n > 0 {
		kernel.err = append([]byte(nil), bytesAt(offset, n)...)
	}
}

func configGet(key uint64) uint64 {
	name := Read(key) // before the lock: Read takes it
	kernel.Lock()
	v, ok := kernel.config[string(name)]
	kernel.Unlock()
	if !ok {
		return 0
	}
	return Write([]byte(v))
}

func toolCall(request uint64) uint64 {
	kernel.Lock()
	tools := kernel.tools
	kernel.Unlock()
	if tools == nil {
		noHost("tool_call")
	}
	return Write(tools(Read(request)))
}

// noHost panics for a capability function, which has no host to ask
// outside WebAssembly.
func noHost(name string) {
	panic("extism: " + name + " needs a WebAssembly host")
}

func varGet(uint64) uint64              { noHost("var_get"); return 0 }
func varSet(uint64, uint64)             { noHost("var_set") }
func httpRequest(uint64, uint64) uint64 { noHost("http_request"); return 0 }
func httpStatusCode() int32             { noHost("http_status_code"); return 0 }
func logTrace(uint64)                   { noHost("log_trace") }
func logDebug(uint64)                   { noHost("log_debug") }
func logInfo(uint64)                    { noHost("log_info") }
func logWarn(uint64)                    { noHost("log_warn") }
func logError(uint64)                   { noHost("log_error") }
func kvGet(uint64, uint64) uint64       { noHost("kv_get"); return 0 }
func kvSet(uint64, uint64, uint64)      { noHost("kv_set") }
func kvDelete(uint64, uint64)           { noHost("kv_delete") }
func kvKeys(uint64, uint64) uint64      { noHost("kv_keys"); return 0 }
