package gemini

import (
	"context"
	"encoding/json"
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
			yield(llm.StreamEvent{}, httpx.StreamError(ctx, providerName, requestID, err))
			return
		}
		if ev.Data == "" {
			continue
		}
		var w wireResponse
		if err := json.Unmarshal([]byte(ev.Data), &w); err != nil {
			yield(llm.StreamEvent{}, httpx.MalformedEvent(providerName, requestID, "stream chunk", ev.Data, err))
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
		yield(llm.StreamEvent{}, httpx.IncompleteStream(providerName, requestID, "a finishReason"))
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
