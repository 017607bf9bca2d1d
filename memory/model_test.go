package memory_test

import (
	"context"
	"iter"
	"strings"
	"sync"

	"github.com/autoagent-go/autoagent/llm"
)

// fakeModel is a hand-written llm.Provider: fn answers each request, and
// every request is recorded. Unlike a fixed script it can answer any number
// of calls, which the hammer and conformance tests need.
type fakeModel struct {
	mu   sync.Mutex
	fn   func(req *llm.Request) (*llm.Response, error)
	reqs []*llm.Request
}

var _ llm.Provider = (*fakeModel)(nil)

func (m *fakeModel) Complete(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	m.reqs = append(m.reqs, req)
	fn := m.fn
	m.mu.Unlock()
	return fn(req)
}

func (m *fakeModel) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.StreamEvent, error] {
	return llm.StreamFromComplete(ctx, req, m.Complete)
}

func (m *fakeModel) requests() []*llm.Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]*llm.Request(nil), m.reqs...)
}

// answer returns a response holding text with the given usage.
func answer(text string, in, out int64) *llm.Response {
	return &llm.Response{
		Message:      llm.AssistantText(text),
		Usage:        &llm.Usage{InputTokens: in, OutputTokens: out, TotalTokens: in + out},
		FinishReason: llm.FinishStop,
	}
}

// userText returns the text of the last user message of req.
func userText(req *llm.Request) string {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == llm.RoleUser {
			return req.Messages[i].Text()
		}
	}
	return ""
}

// systemText returns the text of the first system message of req.
func systemText(req *llm.Request) string {
	for _, m := range req.Messages {
		if m.Role == llm.RoleSystem {
			return m.Text()
		}
	}
	return ""
}

// conversation builds n user/assistant exchanges after a system message.
func conversation(n int, word string) []llm.Message {
	msgs := []llm.Message{llm.SystemText("You are helpful.")}
	for i := 0; i < n; i++ {
		msgs = append(msgs,
			llm.UserText(word+" question "+itoa(i)),
			llm.AssistantText(word+" answer "+itoa(i)))
	}
	return msgs
}

func itoa(i int) string {
	const digits = "0123456789"
	if i < 10 {
		return digits[i : i+1]
	}
	return itoa(i/10) + digits[i%10:i%10+1]
}

// texts returns role:text of each message, for readable comparisons.
func texts(msgs []llm.Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = string(m.Role) + ":" + strings.SplitN(m.Text(), "\n", 2)[0]
	}
	return out
}
