package remote

import (
	"github.com/autoagent-go/autoagent/internal/backend"
	"github.com/autoagent-go/autoagent/llm"
)

// Serve serves p to the host that started this process and returns when
// the host closes the connection. It is the whole main function of a
// provider backend binary:
//
//	func main() { remote.Serve(myProvider) }
//
// p must be safe for concurrent use. A panic in p crashes the backend
// process, which the host reports as [ErrBackendCrashed] for the calls in
// flight and restarts. A binary run by hand, not by a host, prints a
// message saying so and exits with status 1.
func Serve(p llm.Provider) { backend.Serve(versions(p)) }
