//go:build wasip1

package extism

// autoagent's own host functions, in the "extism:host/user" module
// (host/ABI.md §1.4 and §1.5), wrapped in hostfunc.go. Each needs a grant:
// a module that imports one without it loads, and its calls are refused.

//go:wasmimport extism:host/user kv_get
func kvGet(ns, key uint64) uint64

//go:wasmimport extism:host/user kv_set
func kvSet(ns, key, value uint64)

//go:wasmimport extism:host/user kv_delete
func kvDelete(ns, key uint64)

//go:wasmimport extism:host/user kv_keys
func kvKeys(ns, prefix uint64) uint64

//go:wasmimport extism:host/user tool_call
func toolCall(request uint64) uint64
