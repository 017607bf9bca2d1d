package remote

import (
	"fmt"
	"io"

	"github.com/autoagent-go/autoagent/internal/backend"
	"github.com/autoagent-go/autoagent/memory"
)

// Serve serves m to the host that started this process and returns when
// the host closes the connection, after closing m when it is an
// io.Closer. It is the whole main function of a memory backend binary:
//
//	func main() { remote.Serve(myMemory) }
//
// The host sees exactly the optional interfaces m implements
// (memory.Rememberer, memory.Forgetter, memory.Flusher). m must be safe
// for concurrent use. A panic in m crashes the backend process, which the
// host reports as [ErrBackendCrashed] and restarts. A binary run by hand,
// not by a host, prints a message saying so and exits with status 1.
func Serve(m memory.Memory) {
	backend.Serve(versions(m))
	if c, ok := m.(io.Closer); ok {
		_ = c.Close()
	}
}

// memoryName describes m for Info: its Name() when it has one, else its
// type.
func memoryName(m memory.Memory) string {
	if n, ok := m.(interface{ Name() string }); ok {
		return n.Name()
	}
	return fmt.Sprintf("%T", m)
}
