//go:build wasip1

package main

import (
	"runtime/debug"

	"github.com/autoagent-go/autoagent/pdk/go/extism"
)

// softHeapLimit makes the collector work harder as the heap nears the
// host's default memory limit (64 MiB), so a script that fits after a
// collection is not stopped by the hard limit first (as the Go PDK does).
const softHeapLimit = 48 << 20

// programMode is the value of the configuration key "mode" that makes the
// engine run code-mode programs: each call's arguments carry the program
// (see runProgram), and no script is configured.
const programMode = "program"

func init() {
	debug.SetMemoryLimit(softHeapLimit)
}

// call serves one tool call: the script from the configuration, the
// arguments from the input, the MCP result as output.
//
//go:wasmexport call
//lint:ignore U1000 exported to the host by go:wasmexport, which staticcheck does not see
func call() int32 {
	var out []byte
	var failure string
	if mode, _ := extism.Config("mode"); mode == programMode {
		out, failure = handleProgram(extism.Input(nil), hostBridge)
	} else {
		script, ok := extism.Config("script")
		out, failure = handle(extism.Input(nil), script, ok, hostBridge)
	}
	if failure != "" {
		extism.SetError(failure)
		return 1
	}
	extism.Output(out)
	return 0
}

// describe fails: the engine serves whatever tool its describe sidecar
// names, and has no description of its own.
//
//go:wasmexport describe
//lint:ignore U1000 exported to the host by go:wasmexport, which staticcheck does not see
func describe() int32 {
	extism.SetError("this module is the autoagent JavaScript engine: the tool it serves is described by its sidecar NAME.tool.json")
	return 1
}
