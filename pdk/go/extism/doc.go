// Package extism is the Go guest's binding to the host functions of the
// autoagent host (host/ABI.md §1): the `//go:wasmimport` declarations of
// the Extism kernel ("extism:host/env") and of autoagent's own functions
// ("extism:host/user"), and the copies between the module's memory and
// the kernel's blocks. The Go PDK (package pdk), the entry point synth
// generates for a tool a model writes in Go, and the JavaScript engine
// (synth/jsengine) are written on it, so there is one binding; a tool
// author uses package pdk, not this one.
//
// A module's call export reads its input and sets its output:
//
//	//go:wasmexport call
//	func call() int32 {
//		in := extism.Input(nil)
//		if len(in) == 0 {
//			extism.SetError("no input")
//			return 1
//		}
//		extism.Output(bytes.ToUpper(in))
//		return 0
//	}
//
// # Blocks
//
// The kernel's memory is not the module's: an offset names a block there,
// 0 meaning none, and bytes cross eight at a time through load and store
// calls. [Write] copies bytes into a new block, [Read] copies a block out
// ([ReadInto] into a buffer of the caller's, as [CallToolInto] reads a
// tool's result, for a guest calling tools in a loop), [Take] copies it
// out and frees it. Whether the caller frees a block
// follows the host function (host/ABI.md): the host frees what it keeps
// or consumes (the output, an HTTP request and body, a log message, a
// variable's name and value), the caller frees what the host only reads (a
// config key, the kv arguments, a tool request) and every block the host
// returns. A long-lived instance that forgets one fills the kernel's
// memory call by call.
//
// # Imports
//
// Go emits an import only for a function the module calls, so a module
// that never logs or fetches does not import those functions, and the
// autoagent host, which refuses a module that imports a capability
// function it was not granted (http_request, kv_*, tool_call), loads one
// that does not call them without the grant.
//
// # Outside WebAssembly
//
// Built for another GOOS the package keeps its API, for tests: the
// kernel's memory and the call's input, output, error and configuration
// are held in the process (all empty at start), so [Write], [Read],
// [Input] and the code written on them run with the normal toolchain. The
// capability functions (HTTP, logs, variables, kv, tool calls) have no
// host to ask and panic.
package extism
