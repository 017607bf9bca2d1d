//go:build wasip1

package pdk

//lint:file-ignore U1000 describe and call are exported to the host by //go:wasmexport, which staticcheck does not follow, so it thinks they and everything only they use are unused.

import (
	"os"
	"runtime"
	"runtime/debug"
)

// gcAfter is the number of bytes a call may move before the kit collects
// garbage at its end: collecting after every call would cost more than the
// call, never collecting lets a burst of large calls ratchet memory up.
const gcAfter = 256 << 10

func init() {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(48 << 20)
	}
}

//go:wasmexport describe
func describe() int32 {
	doc, err := Describe()
	if err != nil {
		extismErrorSet(writeBlock([]byte(err.Error())))
		return 1
	}
	extismOutputSet(writeBlock(doc), uint64(len(doc)))
	return 0
}

//go:wasmexport call
func call() int32 {
	in := readInput()
	out := Call(in)
	moved := len(in) + len(out)
	extismOutputSet(writeBlock(out), uint64(len(out)))
	releaseInput()
	if moved > gcAfter {
		runtime.GC()
	}
	return 0
}
