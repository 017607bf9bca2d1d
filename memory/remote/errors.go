package remote

import "github.com/autoagent-go/autoagent/internal/backend/supervisor"

// BackendError is the error of a call that failed because of the backend
// process or the connection to it, not because the memory failed (a
// memory's own errors arrive as themselves: errors.Is works with the
// memory package's sentinels, errors.As with *memory.CorruptStoreError and
// *llm.ProviderError). It names the backend; match its cause with
// errors.Is against the sentinels below, context.Canceled or
// context.DeadlineExceeded. The type is shared with providers/remote.
type BackendError = supervisor.Error

// Sentinel errors wrapped by [BackendError]; equal to providers/remote's.
var (
	// ErrBackendCrashed: the backend exited or its connection broke while
	// the call was in flight; whether the call took effect is unknown. The
	// process is restarted for the next call.
	ErrBackendCrashed = supervisor.ErrCrashed
	// ErrBackendStart: the backend could not be started or failed the
	// handshake. The next call tries again after a backoff.
	ErrBackendStart = supervisor.ErrStart
	// ErrBackendUnresponsive: the backend stopped answering health checks
	// after a call timed out and was killed.
	ErrBackendUnresponsive = supervisor.ErrUnresponsive
	// ErrBackendProtocol: the backend answered something this host cannot
	// use.
	ErrBackendProtocol = supervisor.ErrProtocol
	// ErrClosed: the memory was closed.
	ErrClosed = supervisor.ErrClosed
)
