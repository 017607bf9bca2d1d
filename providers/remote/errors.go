package remote

import "github.com/autoagent-go/autoagent/internal/backend/supervisor"

// BackendError is the error of a call that failed because of the backend
// process or the connection to it, not because the provider refused (a
// provider's own failure arrives as the *llm.ProviderError it returned).
// It names the backend; match its cause with errors.Is against the
// sentinels below, context.Canceled or context.DeadlineExceeded. The type
// is shared with memory/remote.
type BackendError = supervisor.Error

// Sentinel errors wrapped by [BackendError]; equal to memory/remote's.
var (
	// ErrBackendCrashed: the backend exited or its connection broke while
	// the call was in flight. The provider may or may not have done the
	// work; the process is restarted for the next call.
	ErrBackendCrashed = supervisor.ErrCrashed
	// ErrBackendStart: the backend could not be started or failed the
	// handshake. The next call tries again after a backoff.
	ErrBackendStart = supervisor.ErrStart
	// ErrBackendUnresponsive: the backend stopped answering health checks
	// after a call timed out and was killed.
	ErrBackendUnresponsive = supervisor.ErrUnresponsive
	// ErrBackendProtocol: the backend answered something this host cannot
	// use, such as a method it does not know or a stream that ended
	// without its terminal event.
	ErrBackendProtocol = supervisor.ErrProtocol
	// ErrClosed: the Provider was closed.
	ErrClosed = supervisor.ErrClosed
)
