//go:build wasip1

package pdk

//lint:file-ignore U1000 describe and call are exported to the host by //go:wasmexport, which staticcheck does not follow, so it thinks they and everything only they use are unused.

import (
	"os"
	"runtime"
	"runtime/debug"

	"github.com/autoagent-go/autoagent/pdk/go/extism"
)

// gcAfter is the number of bytes a call may move before the kit collects
// garbage at its end: collecting after every call would cost more than the
// call, never collecting lets a burst of large calls ratchet memory up.
const gcAfter = 256 << 10

// maxKeptInput is the largest input buffer kept for the next call.
const maxKeptInput = 1 << 20

// inputBuf is the input buffer reused across calls; the dispatcher copies
// what it keeps, so reuse is safe.
var inputBuf []byte

func init() {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(48 << 20)
	}
}

//go:wasmexport describe
func describe() int32 {
	doc, err := Describe()
	if err != nil {
		extism.SetError(err.Error())
		return 1
	}
	extism.Output(doc)
	return 0
}

//go:wasmexport call
func call() int32 {
	inputBuf = extism.Input(inputBuf)
	in := inputBuf
	out := Call(in)
	moved := len(in) + len(out)
	extism.Output(out)
	if cap(inputBuf) > maxKeptInput {
		inputBuf = nil
	}
	if moved > gcAfter {
		runtime.GC()
	}
	return 0
}
