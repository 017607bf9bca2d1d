package wire

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"time"

	"github.com/autoagent-go/autoagent/llm"
)

// Error is an error as it crosses the wire.
type Error struct {
	// Message is err.Error() on the serving side.
	Message string `json:"message"`
	// Is lists the codes of the known sentinel errors err wraps.
	Is []string `json:"is,omitempty"`
	// Provider holds the *llm.ProviderError that err is or wraps.
	Provider *ProviderError `json:"provider,omitempty"`
	// Typed holds the other known typed errors err is or wraps, by name.
	Typed map[string]json.RawMessage `json:"typed,omitempty"`
	// Exact names the typed error ("provider" or a name of Typed) that err
	// itself is, so the host receives that type itself, not a wrapper.
	Exact string `json:"exact,omitempty"`
}

// ProviderError is the wire form of *llm.ProviderError.
type ProviderError struct {
	Provider     string `json:"provider,omitempty"`
	Status       int    `json:"status,omitempty"`
	Code         string `json:"code,omitempty"`
	Message      string `json:"message,omitempty"`
	Retryable    bool   `json:"retryable,omitempty"`
	RetryAfterMS int64  `json:"retry_after_ms,omitempty"`
	RequestID    string `json:"request_id,omitempty"`
	Cause        *Error `json:"cause,omitempty"`
}

// exactProvider is the Exact value of an error that is a *llm.ProviderError.
const exactProvider = "provider"

// TypedError teaches an [ErrorCodec] one more typed error.
type TypedError struct {
	// Name identifies the type on the wire.
	Name string
	// Encode finds the typed error in err's chain (errors.As) and returns
	// its wire form and the value found, or ok false. It encodes the
	// error's cause, if it has one, with encode, so the cause's sentinels
	// survive.
	Encode func(err error, encode func(error) *Error) (raw json.RawMessage, found error, ok bool)
	// Decode rebuilds the typed error from its wire form, decoding a cause
	// with decode.
	Decode func(raw json.RawMessage, decode func(*Error) error) (error, error)
}

// ErrorCodec encodes errors for the wire and decodes them back, keeping
// errors.Is for the sentinels it knows and errors.As for *llm.ProviderError
// and the typed errors it knows. Both sides must use equal codecs.
type ErrorCodec struct {
	// Sentinels maps a stable code to each sentinel error, in addition to
	// the context and llm sentinels every codec knows.
	Sentinels map[string]error
	// Types lists further typed errors.
	Types []TypedError
}

// baseSentinels are known to every codec.
var baseSentinels = map[string]error{
	"context.canceled":          context.Canceled,
	"context.deadline_exceeded": context.DeadlineExceeded,
	"llm.incomplete_stream":     llm.ErrIncompleteStream,
}

func (c *ErrorCodec) sentinel(code string) error {
	if s, ok := baseSentinels[code]; ok {
		return s
	}
	return c.Sentinels[code]
}

// Encode returns the wire form of err, or nil for a nil err.
func (c *ErrorCodec) Encode(err error) *Error {
	if err == nil {
		return nil
	}
	e := &Error{Message: err.Error()}
	for _, table := range []map[string]error{baseSentinels, c.Sentinels} {
		for code, s := range table {
			if errors.Is(err, s) {
				e.Is = append(e.Is, code)
			}
		}
	}
	slices.Sort(e.Is)
	var pe *llm.ProviderError
	if errors.As(err, &pe) {
		e.Provider = &ProviderError{
			Provider: pe.Provider, Status: pe.Status, Code: pe.Code, Message: pe.Message,
			Retryable: pe.Retryable, RetryAfterMS: pe.RetryAfter.Milliseconds(), RequestID: pe.RequestID,
			Cause: c.Encode(pe.Err),
		}
		if error(pe) == err {
			e.Exact = exactProvider
		}
	}
	for _, t := range c.Types {
		raw, found, ok := t.Encode(err, c.Encode)
		if !ok {
			continue
		}
		if e.Typed == nil {
			e.Typed = make(map[string]json.RawMessage)
		}
		e.Typed[t.Name] = raw
		if found == err && e.Exact == "" {
			e.Exact = t.Name
		}
	}
	return e
}

// Decode rebuilds the error e describes, or returns nil for a nil e.
// An error that was a *llm.ProviderError (or a known typed error) comes
// back as that type; any other error comes back as an error with the same
// message that matches the same known sentinels and typed errors.
func (c *ErrorCodec) Decode(e *Error) error {
	if e == nil {
		return nil
	}
	var typed []error
	var exact error
	if e.Provider != nil {
		p := e.Provider
		pe := &llm.ProviderError{
			Provider: p.Provider, Status: p.Status, Code: p.Code, Message: p.Message,
			Retryable: p.Retryable, RetryAfter: time.Duration(p.RetryAfterMS) * time.Millisecond,
			RequestID: p.RequestID, Err: c.Decode(p.Cause),
		}
		typed = append(typed, pe)
		if e.Exact == exactProvider {
			exact = pe
		}
	}
	for _, t := range c.Types {
		raw, ok := e.Typed[t.Name]
		if !ok {
			continue
		}
		te, err := t.Decode(raw, c.Decode)
		if err != nil {
			continue // an undecodable detail still leaves the message and sentinels
		}
		typed = append(typed, te)
		if e.Exact == t.Name {
			exact = te
		}
	}
	if exact != nil {
		return exact
	}
	r := &remoteError{msg: e.Message, typed: typed}
	for _, code := range e.Is {
		if s := c.sentinel(code); s != nil {
			r.is = append(r.is, s)
		}
	}
	return r
}

// remoteError is an error decoded from the wire that was not itself of a
// known type.
type remoteError struct {
	msg   string
	is    []error
	typed []error
}

func (e *remoteError) Error() string { return e.msg }

// Is matches the sentinels the error wrapped on the serving side.
func (e *remoteError) Is(target error) bool {
	return slices.Contains(e.is, target)
}

// Unwrap exposes the typed errors the error wrapped, for errors.As.
func (e *remoteError) Unwrap() []error { return e.typed }
