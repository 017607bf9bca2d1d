package extism_test

import (
	"fmt"

	"github.com/autoagent-go/autoagent/pdk/go/extism"
)

// A block is written into the kernel's memory, handed to a host function
// by its offset, and copied back; Take frees it once read. (Outside
// WebAssembly the kernel is the package's stand-in.)
func ExampleWrite() {
	off := extism.Write([]byte("notes.txt"))
	fmt.Printf("%s\n", extism.Read(off))
	fmt.Printf("%s\n", extism.Take(off))
	fmt.Println(len(extism.Read(off)))
	// Output:
	// notes.txt
	// notes.txt
	// 0
}
