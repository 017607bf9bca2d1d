package openai

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"

	"github.com/autoagent-go/autoagent/internal/httpx"
	"github.com/autoagent-go/autoagent/internal/sse"
	"github.com/autoagent-go/autoagent/llm"
)

// callBuilder accumulates one streamed tool call. Its id and name arrive
// once, its arguments as string fragments keyed by the call's index.
type callBuilder struct {
	id, name string
	args     strings.Builder
	emitted  bool
}

func (b *callBuilder) call() llm.ToolCall {
	return llm.ToolCall{ID: callID(b.id), Name: b.name, Arguments: stringArguments(b.args.String())}
}

// streamState assembles the answer from the chunks.
type streamState struct {
	id, model string
	text      strings.Builder
	reasoning strings.Builder
	calls     []*callBuilder // in order of first appearance
	byIndex   map[int]*callBuilder
	finish    string
	usage     *llm.Usage
}

// readStream parses the SSE body and yields events until [DONE], an error
// or the caller stops.
func (p *Provider) readStream(ctx context.Context, body io.Reader, h http.Header, yield func(llm.StreamEvent, error) bool) {
	st := &streamState{byIndex: map[int]*callBuilder{}}
	reqID := httpx.RequestID(h)
	done := false
	for ev, err := range sse.Read(body) {
		if err != nil {
			yield(llm.StreamEvent{}, httpx.StreamError(ctx, p.cfg.Name, reqID, err))
			return
		}
		data := strings.TrimSpace(ev.Data)
		if data == "[DONE]" {
			done = true
			break
		}
		if data == "" {
			continue
		}
		var c chunk
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			yield(llm.StreamEvent{}, httpx.MalformedEvent(p.cfg.Name, reqID, "stream chunk", data, err))
			return
		}
		if c.Error != nil {
			pe := p.bodyError(c.Error)
			pe.RequestID = reqID
			yield(llm.StreamEvent{}, pe)
			return
		}
		if !st.apply(&c, yield) {
			return
		}
	}
	if done {
		// Read the little that follows [DONE] so the connection goes back
		// to the pool instead of being closed.
		_, _ = io.CopyN(io.Discard, body, 4<<10)
	}
	if !done && st.finish == "" {
		// Clean EOF, but neither [DONE] nor a finish_reason: the server
		// or a proxy cut the answer short.
		yield(llm.StreamEvent{}, httpx.IncompleteStream(p.cfg.Name, reqID, "[DONE] or a finish_reason"))
		return
	}
	if !st.flushCalls(yield) {
		return
	}
	yield(llm.StreamEvent{Type: llm.StreamDone, Response: st.response()}, nil)
}

// apply folds one chunk into the state, yielding its deltas. It returns
// false when the caller stopped.
func (st *streamState) apply(c *chunk, yield func(llm.StreamEvent, error) bool) bool {
	if c.ID != "" {
		st.id = c.ID
	}
	if c.Model != "" {
		st.model = c.Model
	}
	// The final OpenAI chunk has "choices": [] and the usage; Groq also
	// repeats it in x_groq.usage. The last report wins: they are totals,
	// not increments.
	if u := toUsage(c.Usage, c.XGroq); u != nil {
		st.usage = u
	}
	for _, ch := range c.Choices {
		if ch.Index != 0 {
			continue // n > 1 is not requested; ignore extra choices
		}
		d := ch.Delta
		if r := firstNonEmpty(d.ReasoningContent, d.Reasoning); r != "" {
			st.reasoning.WriteString(r)
			if !yield(llm.StreamEvent{Type: llm.StreamReasoning, Text: r}, nil) {
				return false
			}
		}
		if d.Content != "" {
			st.text.WriteString(d.Content)
			if !yield(llm.StreamEvent{Type: llm.StreamText, Text: d.Content}, nil) {
				return false
			}
		}
		for _, tc := range d.ToolCalls {
			b := st.builder(tc)
			// A fragment for a later call means the earlier ones are
			// complete: emit them now rather than at the end.
			for _, prev := range st.calls {
				if prev == b {
					break
				}
				if !st.emit(prev, yield) {
					return false
				}
			}
			if tc.ID != "" {
				b.id = tc.ID
			}
			if tc.Function.Name != "" {
				b.name = tc.Function.Name
			}
			b.args.Write(fragment(tc.Function.Arguments))
		}
		if ch.FinishReason != "" {
			st.finish = ch.FinishReason
			if !st.flushCalls(yield) {
				return false
			}
		}
	}
	return true
}

// builder finds the call a fragment belongs to. Fragments are keyed by
// index; a server that sends no index starts a new call with each id and
// continues the last one otherwise.
func (st *streamState) builder(tc responseToolCall) *callBuilder {
	if tc.Index != nil {
		if b, ok := st.byIndex[*tc.Index]; ok {
			return b
		}
		b := &callBuilder{}
		st.byIndex[*tc.Index] = b
		st.calls = append(st.calls, b)
		return b
	}
	if tc.ID == "" && len(st.calls) > 0 {
		return st.calls[len(st.calls)-1]
	}
	b := &callBuilder{}
	st.calls = append(st.calls, b)
	return b
}

// fragment returns an arguments fragment's text: the content of a JSON
// string, or the raw JSON of an object sent whole.
func fragment(raw json.RawMessage) []byte {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return []byte(s)
		}
	}
	return raw
}

func (st *streamState) emit(b *callBuilder, yield func(llm.StreamEvent, error) bool) bool {
	if b.emitted {
		return true
	}
	b.emitted = true
	if b.id == "" {
		b.id = callID("")
	}
	c := b.call()
	return yield(llm.StreamEvent{Type: llm.StreamToolCall, ToolCall: &c}, nil)
}

func (st *streamState) flushCalls(yield func(llm.StreamEvent, error) bool) bool {
	for _, b := range st.calls {
		if !st.emit(b, yield) {
			return false
		}
	}
	return true
}

func (st *streamState) response() *llm.Response {
	msg := llm.Message{Role: llm.RoleAssistant}
	if r := st.reasoning.String(); r != "" {
		msg.Parts = append(msg.Parts, llm.Part{Type: llm.PartReasoning, Text: r})
	}
	if t := st.text.String(); t != "" {
		msg.Parts = append(msg.Parts, llm.TextPart(t))
	}
	for _, b := range st.calls {
		msg.Parts = append(msg.Parts, llm.ToolCallPart(b.call()))
	}
	return &llm.Response{
		Message:      msg,
		Usage:        st.usage,
		FinishReason: finishReason(st.finish, len(st.calls) > 0),
		Model:        st.model,
		ID:           st.id,
	}
}
