package supervisor

import (
	"errors"
	"strconv"
	"strings"

	"github.com/autoagent-go/autoagent/internal/backend"
)

// Sentinel errors wrapped by [Error].
var (
	// ErrCrashed: the backend process exited or its connection broke while
	// a call was in flight. The call's outcome is unknown; the process is
	// restarted for the next call.
	ErrCrashed = errors.New("remote: backend crashed")

	// ErrStart: the backend process could not be started or did not
	// complete the handshake (missing binary, not an autoagent backend,
	// incompatible protocol version, start timeout). The next call tries
	// again after a backoff.
	ErrStart = errors.New("remote: backend failed to start")

	// ErrUnresponsive: the backend process stopped answering health checks
	// after a call timed out, and was killed. The call that found it out
	// starts a fresh process; this error is seen only when that fails too.
	ErrUnresponsive = errors.New("remote: backend stopped responding")

	// ErrProtocol: the backend answered with something this host cannot
	// use (an unknown method, an undecodable message). The process is kept.
	ErrProtocol = errors.New("remote: backend protocol error")

	// ErrClosed: the client was closed.
	ErrClosed = errors.New("remote: backend client is closed")
)

// Error is the error of a call that failed because of the backend process
// or the way to it, rather than an error the backend's implementation
// returned (those arrive as themselves). It names the backend; match the
// cause with errors.Is against the sentinels above or ctx's errors.
type Error struct {
	// Kind is "provider" or "memory".
	Kind backend.Kind
	// Backend is the backend's name (NAME in autoagent-KIND-NAME, or the
	// binary's base name when it was given as a path).
	Backend string
	// Err is the cause.
	Err error
}

func (e *Error) Error() string {
	// The sentinels say "remote: backend ..."; after the backend's name
	// the prefix would only repeat itself.
	cause := strings.TrimPrefix(e.Err.Error(), "remote: ")
	return "remote: " + string(e.Kind) + " backend " + strconv.Quote(e.Backend) + ": " + cause
}

func (e *Error) Unwrap() error { return e.Err }
