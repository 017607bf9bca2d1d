package llm

import (
	"context"
	"iter"
)

// Provider is a model back-end: OpenAI, Anthropic, Gemini, an
// OpenAI-compatible server, a go-plugin subprocess, or a scripted test model.
//
// Implementations must be safe for concurrent use: one Provider serves every
// run of an agent, and parallel runs call it at once. Neither method may
// modify the Request.
type Provider interface {
	// Complete sends req and returns the whole answer. It returns a
	// *ProviderError when the server refused or failed, and ctx.Err()
	// (possibly wrapped) when ctx ended first.
	Complete(ctx context.Context, req *Request) (*Response, error)

	// Stream sends req and yields the answer as it arrives: text and
	// reasoning deltas, each tool call once complete, and last one
	// [StreamDone] event carrying the assembled Response. A failure, before
	// or during the stream, is yielded once as a non-nil error and ends the
	// sequence; a stream that ends without its terminal event is an error,
	// never a silent empty answer.
	//
	// The sequence is single-use. Stopping the iteration early (yield
	// returning false) or cancelling ctx releases the connection; no
	// goroutine outlives the iteration.
	Stream(ctx context.Context, req *Request) iter.Seq2[StreamEvent, error]
}

// StreamEventType says what a [StreamEvent] carries.
type StreamEventType string

// The stream event types.
const (
	// StreamText carries a delta of the answer's text in Text.
	StreamText StreamEventType = "text"
	// StreamReasoning carries a delta of the model's reasoning in Text.
	StreamReasoning StreamEventType = "reasoning"
	// StreamToolCall carries one complete tool call in ToolCall, as soon as
	// its arguments are complete (before the stream ends).
	StreamToolCall StreamEventType = "tool_call"
	// StreamDone is the last event; Response holds the assembled answer.
	StreamDone StreamEventType = "done"
)

// StreamEvent is one event of a streamed answer.
type StreamEvent struct {
	Type     StreamEventType
	Text     string
	ToolCall *ToolCall
	Response *Response
}

// Name returns a provider's name when it implements interface{ Name() string },
// and "" otherwise. Traces and errors use it.
func Name(p Provider) string {
	if n, ok := p.(interface{ Name() string }); ok {
		return n.Name()
	}
	return ""
}

// StreamFromComplete adapts a provider with no native streaming: it calls
// complete and yields the text as one delta, each tool call, and the done
// event.
func StreamFromComplete(ctx context.Context, req *Request, complete func(context.Context, *Request) (*Response, error)) iter.Seq2[StreamEvent, error] {
	return func(yield func(StreamEvent, error) bool) {
		resp, err := complete(ctx, req)
		if err != nil {
			yield(StreamEvent{}, err)
			return
		}
		if t := resp.Message.Text(); t != "" {
			if !yield(StreamEvent{Type: StreamText, Text: t}, nil) {
				return
			}
		}
		for _, c := range resp.Message.ToolCalls() {
			if !yield(StreamEvent{Type: StreamToolCall, ToolCall: &c}, nil) {
				return
			}
		}
		yield(StreamEvent{Type: StreamDone, Response: resp}, nil)
	}
}
