package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/autoagent-go/autoagent/internal/httpx"
	"github.com/autoagent-go/autoagent/internal/sse"
	"github.com/autoagent-go/autoagent/llm"
)

// streamState assembles a streamed answer from its events: message_start,
// then per content block content_block_start, content_block_delta* and
// content_block_stop, then message_delta and message_stop. ping is ignored;
// error ends the stream with a *llm.ProviderError.
type streamState struct {
	requestID string // the response's request-id, for errors
	resp      llm.Response
	usage     usageAcc
	blocks    map[int]*openBlock
	done      bool
	// answer is the answer tool's name (structured output): its input
	// streams as text, and its block yields no tool call.
	answer string
}

// openBlock is a content block between its start and stop events.
type openBlock struct {
	kind string // text, thinking, redacted_thinking, tool_use, or other
	part int    // index of its part in resp.Message.Parts, -1 for other
	text strings.Builder
	sig  strings.Builder
	args bytes.Buffer
}

func newStreamState(requestID string) *streamState {
	return &streamState{
		requestID: requestID,
		resp:      llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{}}},
		blocks:    map[int]*openBlock{},
	}
}

// readStream parses the SSE body and yields the answer's events, ending
// with StreamDone or an error, or stops early when yield returns false.
func readStream(ctx context.Context, body io.Reader, requestID, answer string, yield func(llm.StreamEvent, error) bool) {
	st := newStreamState(requestID)
	st.answer = answer
	for ev, err := range sse.Read(body) {
		if err != nil {
			yield(llm.StreamEvent{}, httpx.StreamError(ctx, providerName, requestID, err))
			return
		}
		if ev.Data == "" {
			continue
		}
		var w wireStreamEvent
		if err := json.Unmarshal([]byte(ev.Data), &w); err != nil {
			yield(llm.StreamEvent{}, httpx.MalformedEvent(providerName, requestID, fmt.Sprintf("stream event %q", ev.Event), ev.Data, err))
			return
		}
		out, err := st.handle(&w)
		if err != nil {
			yield(llm.StreamEvent{}, err)
			return
		}
		for _, e := range out {
			if !yield(e, nil) {
				return
			}
		}
		if st.done {
			// Read the little that may follow message_stop so the
			// connection goes back to the pool instead of being closed.
			_, _ = io.CopyN(io.Discard, body, 4<<10)
			return
		}
	}
	// Clean EOF without message_stop: the server or a proxy cut the
	// answer short.
	yield(llm.StreamEvent{}, httpx.IncompleteStream(providerName, requestID, "message_stop"))
}

// handle applies one event and returns the stream events it produces.
func (st *streamState) handle(w *wireStreamEvent) ([]llm.StreamEvent, error) {
	switch w.Type {
	case "message_start":
		if m := w.Message; m != nil {
			st.resp.ID = m.ID
			st.resp.Model = m.Model
			st.usage.merge(m.Usage)
		}
	case "content_block_start":
		return st.start(w)
	case "content_block_delta":
		return st.delta(w)
	case "content_block_stop":
		return st.stop(w.Index)
	case "message_delta":
		if w.Delta != nil && w.Delta.StopReason != "" {
			st.resp.FinishReason = finishReason(w.Delta.StopReason)
		}
		st.usage.merge(w.Usage)
	case "message_stop":
		// A block never stopped (not seen in practice) is closed here so
		// its content is not lost.
		var out []llm.StreamEvent
		for _, idx := range slices.Sorted(maps.Keys(st.blocks)) {
			evs, err := st.stop(idx)
			if err != nil {
				return nil, err
			}
			out = append(out, evs...)
		}
		st.resp.Usage = st.usage.usage()
		st.done = true
		resp := st.resp
		return append(out, llm.StreamEvent{Type: llm.StreamDone, Response: &resp}), nil
	case "error":
		return nil, bodyError(w.Error, st.requestID)
	}
	// ping and event types added later by the API are ignored.
	return nil, nil
}

func (st *streamState) start(w *wireStreamEvent) ([]llm.StreamEvent, error) {
	cb := w.ContentBlock
	if cb == nil {
		return nil, st.malformed("content_block_start without content_block")
	}
	b := &openBlock{kind: cb.Type, part: -1}
	st.blocks[w.Index] = b
	var out []llm.StreamEvent
	switch cb.Type {
	case "text":
		b.part = st.addPart(llm.Part{Type: llm.PartText})
		if t := deref(cb.Text); t != "" {
			b.text.WriteString(t)
			out = append(out, llm.StreamEvent{Type: llm.StreamText, Text: t})
		}
	case "thinking":
		b.part = st.addPart(llm.Part{Type: llm.PartReasoning})
		if t := deref(cb.Thinking); t != "" {
			b.text.WriteString(t)
			out = append(out, llm.StreamEvent{Type: llm.StreamReasoning, Text: t})
		}
		b.sig.WriteString(deref(cb.Signature))
	case "redacted_thinking":
		b.part = st.addPart(llm.Part{Type: llm.PartReasoning, Redacted: cb.Data})
	case "tool_use":
		b.part = st.addPart(llm.ToolCallPart(llm.ToolCall{ID: toolID(cb.ID), Name: cb.Name}))
		// The start event carries "input":{} and the arguments follow as
		// input_json_delta fragments; a non-empty start input (a proxy
		// that does not stream arguments) is kept as the initial value.
		if in := bytes.TrimSpace(cb.Input); len(in) > 0 && string(in) != "{}" && string(in) != "null" {
			b.args.Write(in)
			if st.answer != "" && cb.Name == st.answer {
				out = append(out, llm.StreamEvent{Type: llm.StreamText, Text: string(in)})
			}
		}
	}
	return out, nil
}

func (st *streamState) delta(w *wireStreamEvent) ([]llm.StreamEvent, error) {
	d := w.Delta
	b := st.blocks[w.Index]
	if d == nil || b == nil {
		return nil, st.malformed(fmt.Sprintf("content_block_delta for block %d, which was not started", w.Index))
	}
	switch d.Type {
	case "text_delta":
		if d.Text == "" {
			return nil, nil
		}
		b.text.WriteString(d.Text)
		return []llm.StreamEvent{{Type: llm.StreamText, Text: d.Text}}, nil
	case "thinking_delta":
		if d.Thinking == "" {
			return nil, nil
		}
		b.text.WriteString(d.Thinking)
		return []llm.StreamEvent{{Type: llm.StreamReasoning, Text: d.Thinking}}, nil
	case "signature_delta":
		b.sig.WriteString(d.Signature)
	case "input_json_delta":
		// The first fragment is usually empty.
		b.args.WriteString(d.PartialJSON)
		if d.PartialJSON != "" && st.isAnswer(b) {
			return []llm.StreamEvent{{Type: llm.StreamText, Text: d.PartialJSON}}, nil
		}
	}
	// citations_delta and future delta types are ignored.
	return nil, nil
}

func (st *streamState) stop(index int) ([]llm.StreamEvent, error) {
	b := st.blocks[index]
	if b == nil {
		return nil, st.malformed(fmt.Sprintf("content_block_stop for block %d, which was not started", index))
	}
	delete(st.blocks, index)
	if b.part < 0 {
		return nil, nil
	}
	p := &st.resp.Message.Parts[b.part]
	switch b.kind {
	case "text":
		p.Text = b.text.String()
	case "thinking":
		p.Text = b.text.String()
		p.Signature = b.sig.String()
	case "tool_use":
		args := bytes.TrimSpace(b.args.Bytes())
		if len(args) == 0 {
			args = []byte("{}")
		}
		// Invalid JSON is kept as the model produced it: the tool
		// rejects it with an error the model can correct.
		p.ToolCall.Arguments = json.RawMessage(bytes.Clone(args))
		if st.isAnswer(b) {
			return nil, nil // streamed as text already
		}
		call := *p.ToolCall
		return []llm.StreamEvent{{Type: llm.StreamToolCall, ToolCall: &call}}, nil
	}
	return nil, nil
}

// isAnswer reports whether b is the answer tool's block.
func (st *streamState) isAnswer(b *openBlock) bool {
	if st.answer == "" || b.kind != "tool_use" || b.part < 0 {
		return false
	}
	tc := st.resp.Message.Parts[b.part].ToolCall
	return tc != nil && tc.Name == st.answer
}

func (st *streamState) addPart(p llm.Part) int {
	st.resp.Message.Parts = append(st.resp.Message.Parts, p)
	return len(st.resp.Message.Parts) - 1
}

func (st *streamState) malformed(msg string) error {
	return &llm.ProviderError{Provider: providerName, RequestID: st.requestID, Message: "malformed stream: " + msg}
}
