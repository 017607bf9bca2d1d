package llm

import (
	"errors"
	"fmt"
	"time"
)

// ErrIncompleteStream is wrapped by the error a stream yields when the
// connection ended before the provider's terminal event.
var ErrIncompleteStream = errors.New("llm: stream ended before the response was complete")

// ProviderError is a failure reported by, or on the way to, a model provider.
//
// Callers decide on retries with Retryable and RetryAfter; they never match
// on the message.
type ProviderError struct {
	// Provider names the back-end ("openai", "anthropic", ...).
	Provider string
	// Status is the HTTP status, or 0 when no response arrived (network
	// failure) or the error came inside a 200 stream.
	Status int
	// Code is the provider's own error code or type ("rate_limit_exceeded",
	// "overloaded_error", "RESOURCE_EXHAUSTED"), when it sent one.
	Code string
	// Message is the provider's human-readable message.
	Message string
	// Retryable reports that the same request may succeed later (429, 5xx,
	// overloaded, a dropped connection).
	Retryable bool
	// RetryAfter is the delay the provider asked for, or 0.
	RetryAfter time.Duration
	// RequestID is the provider's request id, for support tickets.
	RequestID string
	// Err is the underlying cause, if any.
	Err error
}

func (e *ProviderError) Error() string {
	msg := e.Message
	if msg == "" && e.Err != nil {
		msg = e.Err.Error()
	}
	s := "llm: " + e.Provider
	if e.Provider == "" {
		s = "llm: provider"
	}
	if e.Status != 0 {
		s += fmt.Sprintf(" returned HTTP %d", e.Status)
	} else {
		s += " failed"
	}
	if e.Code != "" {
		s += " (" + e.Code + ")"
	}
	if msg != "" {
		s += ": " + msg
	}
	if e.RequestID != "" {
		s += " [request " + e.RequestID + "]"
	}
	return s
}

func (e *ProviderError) Unwrap() error { return e.Err }

// IsRetryable reports whether err is, or wraps, a retryable *ProviderError.
func IsRetryable(err error) bool {
	var pe *ProviderError
	return errors.As(err, &pe) && pe.Retryable
}
