//go:build wasip1

package extism

// The Extism kernel: the functions every Extism host provides in the
// "extism:host/env" module (host/ABI.md §1.1 to §1.3), declared here once
// and wrapped, with their contracts, in block.go and hostfunc.go.

//go:wasmimport extism:host/env input_length
func inputLength() uint64

//go:wasmimport extism:host/env input_load_u8
func inputLoadU8(offset uint64) uint32

//go:wasmimport extism:host/env input_load_u64
func inputLoadU64(offset uint64) uint64

//go:wasmimport extism:host/env length
func length(offset uint64) uint64

//go:wasmimport extism:host/env alloc
func alloc(size uint64) uint64

//go:wasmimport extism:host/env free
func free(offset uint64)

//go:wasmimport extism:host/env load_u8
func loadU8(offset uint64) uint32

//go:wasmimport extism:host/env load_u64
func loadU64(offset uint64) uint64

//go:wasmimport extism:host/env store_u8
func storeU8(offset uint64, v uint32)

//go:wasmimport extism:host/env store_u64
func storeU64(offset, v uint64)

//go:wasmimport extism:host/env output_set
func outputSet(offset, size uint64)

//go:wasmimport extism:host/env error_set
func errorSet(offset uint64)

//go:wasmimport extism:host/env config_get
func configGet(key uint64) uint64

//go:wasmimport extism:host/env var_get
func varGet(name uint64) uint64

//go:wasmimport extism:host/env var_set
func varSet(name, value uint64)

//go:wasmimport extism:host/env http_request
func httpRequest(request, body uint64) uint64

//go:wasmimport extism:host/env http_status_code
func httpStatusCode() int32

//go:wasmimport extism:host/env log_trace
func logTrace(msg uint64)

//go:wasmimport extism:host/env log_debug
func logDebug(msg uint64)

//go:wasmimport extism:host/env log_info
func logInfo(msg uint64)

//go:wasmimport extism:host/env log_warn
func logWarn(msg uint64)

//go:wasmimport extism:host/env log_error
func logError(msg uint64)
