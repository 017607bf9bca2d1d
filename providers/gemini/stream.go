package gemini

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/autoagent-go/autoagent/internal/httpx"
	"github.com/autoagent-go/autoagent/internal/sse"
	"github.com/autoagent-go/autoagent/llm"
)

// readStream parses a streamGenerateContent?alt=sse body (one JSON
// response chunk per event, events separated by "\r\n\r\n", no terminal
// marker) and yields the answer's events, ending with StreamDone or an
// error, or stops early when yield returns false. The stream is complete
// when a chunk carried a finishReason (or the prompt was blocked); a body
// that ends before that is an incomplete stream.
func readStream(ctx context.Context, body io.Reader, model, requestID string, yield func(llm.StreamEvent, error) bool) {
	a := newAssembler(model)
	for ev, err := range sse.Read(body) {
		if err != nil {
			yield(llm.StreamEvent{}, streamBroken(ctx, err, requestID))
			return
		}
		if ev.Data == "" {
			continue
		}
		var w wireResponse
		if err := json.Unmarshal([]byte(ev.Data), &w); err != nil {
			yield(llm.StreamEvent{}, &llm.ProviderError{
				Provider:  providerName,
				Message:   fmt.Sprintf("malformed stream chunk (%v): %s", err, truncate(ev.Data, 200)),
				RequestID: requestID,
				Err:       err,
			})
			return
		}
		out, err := a.add(&w, requestID)
		if err != nil {
			yield(llm.StreamEvent{}, err)
			return
		}
		for _, e := range out {
			if !yield(e, nil) {
				return
			}
		}
	}
	if !a.complete() {
		yield(llm.StreamEvent{}, &llm.ProviderError{
			Provider:  providerName,
			Message:   "stream ended before a finishReason",
			Retryable: true,
			RequestID: requestID,
			Err:       llm.ErrIncompleteStream,
		})
		return
	}
	out, resp := a.result()
	for _, e := range out {
		if !yield(e, nil) {
			return
		}
	}
	yield(llm.StreamEvent{Type: llm.StreamDone, Response: resp}, nil)
}

// streamBroken describes a read failure in the middle of a stream: the
// caller's cancellation, an event over the size limit, or a broken or
// silent connection (retryable, wrapping llm.ErrIncompleteStream).
func streamBroken(ctx context.Context, err error, requestID string) error {
	if ctx.Err() != nil && !errors.Is(err, httpx.ErrStreamIdle) {
		return fmt.Errorf("%s: %w", providerName, ctx.Err())
	}
	if errors.Is(err, sse.ErrEventTooLarge) {
		return &llm.ProviderError{Provider: providerName, RequestID: requestID, Message: err.Error(), Err: err}
	}
	return &llm.ProviderError{
		Provider:  providerName,
		Message:   "stream broken: " + err.Error(),
		Retryable: true,
		RequestID: requestID,
		Err:       errors.Join(llm.ErrIncompleteStream, err),
	}
}
