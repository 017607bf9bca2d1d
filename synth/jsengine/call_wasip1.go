//go:build wasip1

package main

// call serves one tool call: the script from the configuration, the
// arguments from the input, the MCP result as output.
//
//go:wasmexport call
func call() int32 {
	script, ok := config("script")
	out, failure := handle(readInput(), script, ok, hostBridge)
	if failure != "" {
		errorSet(writeBlock([]byte(failure)))
		return 1
	}
	outputSet(writeBlock(out), uint64(len(out)))
	return 0
}

// describe fails: the engine serves whatever tool its describe sidecar
// names, and has no description of its own.
//
//go:wasmexport describe
func describe() int32 {
	errorSet(writeBlock([]byte("this module is the autoagent JavaScript engine: the tool it serves is described by its sidecar NAME.tool.json")))
	return 1
}
