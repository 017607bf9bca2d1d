package httpx

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/autoagent-go/autoagent/internal/retry"
	"github.com/autoagent-go/autoagent/internal/sse"
	"github.com/autoagent-go/autoagent/llm"
)

// Complete runs a non-streamed call under policy: send posts one attempt
// (returning its error as [Post] does), the 2xx body is decoded into a
// fresh W by [DecodeJSON], and convert turns it into the answer. Decoding
// and converting are part of the attempt, so a body the network cut short
// is retried like a failed request; a body cut short because ctx ended
// gives ctx's error instead, which nobody retries.
func Complete[W any](ctx context.Context, policy retry.Policy, provider string,
	send func(ctx context.Context) (*http.Response, error),
	convert func(w *W, h http.Header) (*llm.Response, error)) (*llm.Response, error) {
	var out *llm.Response
	err := policy.Do(ctx, func(ctx context.Context) error {
		resp, err := send(ctx)
		if err != nil {
			return err
		}
		var w W
		if err := DecodeJSON(provider, resp, &w); err != nil {
			if ctx.Err() != nil {
				return TransportError(ctx, provider, err)
			}
			return err
		}
		out, err = convert(&w, resp.Header)
		return err
	})
	return out, err
}

// Stream opens a streamed call under policy and hands its body to read.
// Only the opening is retried: events already yielded cannot be taken
// back. The body is watched by [WatchIdle]: when no byte arrives for idle
// (never when idle <= 0), the ctx read was given is cancelled and the
// pending read fails with [ErrStreamIdle]. That ctx is also cancelled when
// Stream returns, which closes the connection of a stream whose reader
// stopped early. Stream returns the error that kept the stream from
// opening; read reports everything after (see [StreamError]).
func Stream(ctx context.Context, policy retry.Policy, idle time.Duration,
	send func(ctx context.Context) (*http.Response, error),
	read func(ctx context.Context, body io.Reader, h http.Header)) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var resp *http.Response
	err := policy.Do(ctx, func(ctx context.Context) error {
		var err error
		resp, err = send(ctx)
		return err
	})
	if err != nil {
		return err
	}
	body := WatchIdle(resp.Body, idle, cancel)
	defer body.Close()
	read(ctx, body, resp.Header)
	return nil
}

// StreamError describes a failure to read a stream that had opened: an
// error wrapping ctx.Err() when the caller ended ctx (an idle timeout also
// cancels ctx but is the server's silence, not the caller's choice), a
// non-retryable *llm.ProviderError for an event over the size limit, and
// otherwise a broken or silent connection: a retryable *llm.ProviderError
// wrapping [llm.ErrIncompleteStream] and err.
func StreamError(ctx context.Context, provider, requestID string, err error) error {
	if ctx.Err() != nil && !errors.Is(err, ErrStreamIdle) {
		return fmt.Errorf("%s: %w", provider, ctx.Err())
	}
	if errors.Is(err, sse.ErrEventTooLarge) {
		return &llm.ProviderError{Provider: provider, RequestID: requestID, Message: err.Error(), Err: err}
	}
	return &llm.ProviderError{
		Provider:  provider,
		Message:   "stream broken: " + err.Error(),
		Retryable: true,
		RequestID: requestID,
		Err:       errors.Join(llm.ErrIncompleteStream, err),
	}
}

// IncompleteStream is the error of a stream whose body ended cleanly before
// the answer was complete: the server or a proxy cut it short. missing says
// what never came ("message_stop"). It is a retryable *llm.ProviderError
// wrapping [llm.ErrIncompleteStream].
func IncompleteStream(provider, requestID, missing string) error {
	return &llm.ProviderError{
		Provider:  provider,
		Message:   "stream ended before " + missing,
		Retryable: true,
		RequestID: requestID,
		Err:       llm.ErrIncompleteStream,
	}
}

// MalformedEvent is the error of a stream event whose data is not the JSON
// expected: a non-retryable *llm.ProviderError (the server would send the
// same again) wrapping err and quoting the start of data. what names the
// event ("stream chunk").
func MalformedEvent(provider, requestID, what, data string, err error) error {
	return &llm.ProviderError{
		Provider:  provider,
		Message:   fmt.Sprintf("malformed %s (%v): %s", what, err, Truncate(data, 200)),
		RequestID: requestID,
		Err:       err,
	}
}
