package gemini

import (
	"bytes"
	"encoding/base64"
	"encoding/json"

	"github.com/autoagent-go/autoagent/llm"
)

// assembler builds one answer from a generateContent response or from the
// chunks of a stream (each chunk is a partial response of the same shape).
// add returns the stream events a chunk produces; finish returns the
// assembled response.
type assembler struct {
	resp     llm.Response
	usage    *wireUsage
	finish   string
	blocked  string
	sawCalls bool
	// open is the index of the text or reasoning part that following text
	// of the same kind extends, or -1.
	open    int
	pending *pendingCall
}

// pendingCall is a function call whose arguments Gemini 3 is still
// streaming as partialArgs.
type pendingCall struct {
	part int // index of its part in resp.Message.Parts
	args *argTree
	raw  json.RawMessage
}

func newAssembler(model string) *assembler {
	return &assembler{
		resp: llm.Response{Model: model, Message: llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{}}},
		open: -1,
	}
}

func (a *assembler) add(w *wireResponse, requestID string) ([]llm.StreamEvent, error) {
	if w.Error != nil {
		return nil, bodyError(w.Error, requestID)
	}
	if w.ModelVersion != "" {
		a.resp.Model = w.ModelVersion
	}
	if w.ResponseID != "" {
		a.resp.ID = w.ResponseID
	}
	if u := w.UsageMetadata; u != nil && hasCounts(u) {
		// Every chunk repeats the running totals: the last one wins.
		a.usage = u
	}
	if f := w.PromptFeedback; f != nil && f.BlockReason != "" {
		a.blocked = f.BlockReason
	}
	if len(w.Candidates) == 0 {
		return nil, nil
	}
	// Only the first candidate is read: the adapter never asks for more.
	cand := w.Candidates[0]
	if cand.FinishReason != "" {
		a.finish = cand.FinishReason
	}
	if cand.Content == nil {
		return nil, nil
	}
	var out []llm.StreamEvent
	for i := range cand.Content.Parts {
		out = a.part(&cand.Content.Parts[i], out)
	}
	return out, nil
}

func (a *assembler) part(p *wirePart, out []llm.StreamEvent) []llm.StreamEvent {
	switch {
	case p.FunctionCall != nil:
		a.open = -1
		return a.call(p, out)
	case p.InlineData != nil:
		a.open = -1
		data, err := base64.StdEncoding.DecodeString(p.InlineData.Data)
		if err != nil {
			// Kept as a text note rather than dropped silently.
			return a.text(&wirePart{Text: ptr("[undecodable " + p.InlineData.MIMEType + " data]")}, out)
		}
		a.add1(llm.Part{Type: llm.PartImage, Image: &llm.Image{MIMEType: p.InlineData.MIMEType, Data: data}, Signature: p.ThoughtSignature})
		return out
	case p.Text != nil || p.ThoughtSignature != "":
		return a.text(p, out)
	}
	// executableCode, codeExecutionResult and future part kinds.
	return out
}

// text appends a text or thought part. Streamed text arrives in many small
// parts; consecutive ones of the same kind are joined into one part, until
// one carries a thoughtSignature, which belongs to the joined part.
func (a *assembler) text(p *wirePart, out []llm.StreamEvent) []llm.StreamEvent {
	typ, evType := llm.PartText, llm.StreamText
	if p.Thought {
		typ, evType = llm.PartReasoning, llm.StreamReasoning
	}
	t := deref(p.Text)
	if a.open >= 0 && a.resp.Message.Parts[a.open].Type == typ && a.resp.Message.Parts[a.open].Signature == "" {
		q := &a.resp.Message.Parts[a.open]
		q.Text += t
		q.Signature = p.ThoughtSignature
	} else {
		a.open = a.add1(llm.Part{Type: typ, Text: t, Signature: p.ThoughtSignature})
	}
	if t != "" {
		out = append(out, llm.StreamEvent{Type: evType, Text: t})
	}
	return out
}

// call handles a functionCall part: a whole call (Gemini 2.x, and Gemini 3
// without argument streaming), or one piece of a streamed call: a first
// part with the name and willContinue, parts with partialArgs, and an
// empty functionCall without willContinue that closes it.
func (a *assembler) call(p *wirePart, out []llm.StreamEvent) []llm.StreamEvent {
	fc := p.FunctionCall
	if fc.Name != "" && a.pending != nil {
		out = a.closePending(out)
	}
	if a.pending == nil {
		if fc.Name == "" {
			return out // a closing marker with nothing open
		}
		id := fc.ID
		if id == "" {
			// Gemini sends no ids; results are matched to calls by this one.
			id = llm.NewCallID("gemini_")
		}
		a.sawCalls = true
		idx := a.add1(llm.Part{Type: llm.PartToolCall, ToolCall: &llm.ToolCall{ID: id, Name: fc.Name}, Signature: p.ThoughtSignature})
		a.pending = &pendingCall{part: idx, raw: compact(fc.Args)}
	} else if p.ThoughtSignature != "" {
		a.resp.Message.Parts[a.pending.part].Signature = p.ThoughtSignature
	}
	if len(fc.PartialArgs) > 0 {
		if a.pending.args == nil {
			a.pending.args = newArgTree(a.pending.raw)
		}
		for _, pa := range fc.PartialArgs {
			a.pending.args.apply(pa)
		}
	}
	if !fc.WillContinue {
		out = a.closePending(out)
	}
	return out
}

func (a *assembler) closePending(out []llm.StreamEvent) []llm.StreamEvent {
	pc := a.pending
	a.pending = nil
	var args json.RawMessage
	switch {
	case pc.args != nil:
		args = pc.args.json()
	case len(pc.raw) > 0 && string(pc.raw) != "null":
		args = pc.raw
	default:
		args = json.RawMessage(`{}`)
	}
	tc := a.resp.Message.Parts[pc.part].ToolCall
	tc.Arguments = args
	call := *tc
	return append(out, llm.StreamEvent{Type: llm.StreamToolCall, ToolCall: &call})
}

func (a *assembler) add1(p llm.Part) int {
	a.resp.Message.Parts = append(a.resp.Message.Parts, p)
	return len(a.resp.Message.Parts) - 1
}

// complete reports whether the answer reached its end: a finish reason, or
// a prompt the server blocked outright.
func (a *assembler) complete() bool { return a.finish != "" || a.blocked != "" }

// result closes any call still open and returns the answer.
func (a *assembler) result() ([]llm.StreamEvent, *llm.Response) {
	var out []llm.StreamEvent
	if a.pending != nil {
		out = a.closePending(out)
	}
	resp := a.resp
	resp.FinishReason = finishReason(a.finish, a.sawCalls)
	if a.finish == "" && a.blocked != "" {
		resp.FinishReason = llm.FinishContentFilter
	}
	resp.Usage = normUsage(a.usage)
	return out, &resp
}

// finishReason normalises finishReason. Gemini says STOP after function
// calls too, so calls make it tool_calls.
func finishReason(s string, calls bool) llm.FinishReason {
	switch s {
	case "":
		return ""
	case "STOP":
		if calls {
			return llm.FinishToolCalls
		}
		return llm.FinishStop
	case "MAX_TOKENS":
		return llm.FinishLength
	case "SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY", "IMAGE_PROHIBITED_CONTENT", "IMAGE_RECITATION":
		return llm.FinishContentFilter
	default: // MALFORMED_FUNCTION_CALL, UNEXPECTED_TOOL_CALL, OTHER, LANGUAGE, ...
		return llm.FinishOther
	}
}

func hasCounts(u *wireUsage) bool {
	return u.PromptTokenCount != nil || u.CandidatesTokenCount != nil || u.TotalTokenCount != nil ||
		u.ThoughtsTokenCount != nil || u.CachedContentTokenCount != nil || u.ToolUsePromptTokenCount != nil
}

// normUsage maps usageMetadata: the prompt (and tool-use prompt) is input,
// with cachedContentTokenCount already inside it; candidates plus thoughts
// are output, because thinking is billed as output.
func normUsage(u *wireUsage) *llm.Usage {
	if u == nil {
		return nil
	}
	n := func(p *int64) int64 {
		if p == nil {
			return 0
		}
		return *p
	}
	out := llm.Usage{
		InputTokens:  n(u.PromptTokenCount) + n(u.ToolUsePromptTokenCount),
		OutputTokens: n(u.CandidatesTokenCount) + n(u.ThoughtsTokenCount),
		CachedTokens: n(u.CachedContentTokenCount),
		TotalTokens:  n(u.TotalTokenCount),
	}.Normalize()
	return &out
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// compact removes the insignificant whitespace of the server's
// pretty-printed args, keeping key order and values as sent.
func compact(raw json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return bytes.TrimSpace(raw)
	}
	return b.Bytes()
}
