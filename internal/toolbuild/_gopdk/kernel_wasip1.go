//go:build wasip1

package pdk

//lint:file-ignore U1000 describe and call are exported to the host by //go:wasmexport, which staticcheck does not follow, so it thinks they and everything only they use are unused.

// The Extism kernel: the functions every Extism host provides in the
// "extism:host/env" module. Offsets and lengths address the kernel's own
// memory, not the module's linear memory, so data is copied across with
// load/store calls. Only the functions a module uses end up among its
// imports, so a tool that never logs does not import log_info.

//go:wasmimport extism:host/env input_length
func extismInputLength() uint64

//go:wasmimport extism:host/env input_load_u8
func extismInputLoadU8(offset uint64) uint32

//go:wasmimport extism:host/env input_load_u64
func extismInputLoadU64(offset uint64) uint64

//go:wasmimport extism:host/env length
func extismLength(offset uint64) uint64

//go:wasmimport extism:host/env alloc
func extismAlloc(size uint64) uint64

//go:wasmimport extism:host/env free
func extismFree(offset uint64)

//go:wasmimport extism:host/env output_set
func extismOutputSet(offset, size uint64)

//go:wasmimport extism:host/env error_set
func extismErrorSet(offset uint64)

//go:wasmimport extism:host/env load_u8
func extismLoadU8(offset uint64) uint32

//go:wasmimport extism:host/env load_u64
func extismLoadU64(offset uint64) uint64

//go:wasmimport extism:host/env store_u8
func extismStoreU8(offset uint64, v uint32)

//go:wasmimport extism:host/env store_u64
func extismStoreU64(offset, v uint64)

//go:wasmimport extism:host/env config_get
func extismConfigGet(key uint64) uint64

//go:wasmimport extism:host/env var_get
func extismVarGet(key uint64) uint64

//go:wasmimport extism:host/env var_set
func extismVarSet(key, value uint64)

//go:wasmimport extism:host/env http_request
func extismHTTPRequest(request, body uint64) uint64

//go:wasmimport extism:host/env http_status_code
func extismHTTPStatusCode() int32

//go:wasmimport extism:host/env log_trace
func extismLogTrace(offset uint64)

//go:wasmimport extism:host/env log_debug
func extismLogDebug(offset uint64)

//go:wasmimport extism:host/env log_info
func extismLogInfo(offset uint64)

//go:wasmimport extism:host/env log_warn
func extismLogWarn(offset uint64)

//go:wasmimport extism:host/env log_error
func extismLogError(offset uint64)
