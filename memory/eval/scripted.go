package eval

import (
	"context"
	"encoding/json"
	"iter"
	"strings"

	"github.com/autoagent-go/autoagent/llm"
)

// ScriptedModel returns a deterministic llm.Provider that plays every model
// part of the eval without a network:
//
//   - an extraction request (JSON mode, with "New exchanges:") is answered
//     with the Extraction of the session whose first user message it
//     contains ({"operations":[]} when none);
//   - a summary request is answered with an extractive summary: the
//     previous summary and every user line of the exchanges;
//   - a forget request is answered {"forget":[]};
//   - the answering agent, offered tools and not yet shown a tool result,
//     calls recall once with the question (k 20); otherwise it answers with
//     every line its context holds beyond the system prompt and the
//     question (memory messages, recall matches), or "I don't know."
//
// The reader does not reason: it reports what the memory put in front of
// it, so its score measures the memory alone. Usage is a nominal count (a
// quarter of the characters sent and received) so reports are
// reproducible.
func ScriptedModel(scenarios []Scenario) llm.Provider {
	m := &scriptedModel{extractions: map[string]string{}}
	for _, sc := range scenarios {
		for _, s := range sc.Sessions {
			if len(s.Turns) > 0 {
				m.extractions[s.Turns[0].User] = s.Extraction
			}
		}
	}
	return m
}

type scriptedModel struct {
	extractions map[string]string // first user message of a session -> extraction
}

func (m *scriptedModel) Name() string { return "eval-scripted" }

func (m *scriptedModel) Complete(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	user := lastUser(req.Messages)
	var msg llm.Message
	switch {
	case req.ResponseFormat != nil && strings.Contains(user, "New exchanges:"):
		msg = llm.AssistantText(m.extract(user))
	case req.ResponseFormat != nil && strings.HasPrefix(user, "Instruction:"):
		msg = llm.AssistantText(`{"forget":[],"reason":"the scripted model never forgets"}`)
	case strings.Contains(user, "New exchanges:"):
		msg = llm.AssistantText(summarize(user))
	case len(req.Tools) > 0 && !hasToolResult(req.Messages):
		args, _ := json.Marshal(map[string]any{"query": user, "k": 20})
		msg = llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{llm.ToolCallPart(llm.ToolCall{ID: "recall_1", Name: req.Tools[0].Name, Arguments: args})}}
	default:
		msg = llm.AssistantText(read(req.Messages))
	}
	in := 0
	for _, x := range req.Messages {
		in += len(x.Text())
		for _, r := range x.ToolResults() {
			in += len(r.Content)
		}
	}
	out := len(msg.Text())
	for _, c := range msg.ToolCalls() {
		out += len(c.Arguments)
	}
	finish := llm.FinishStop
	if len(msg.ToolCalls()) > 0 {
		finish = llm.FinishToolCalls
	}
	u := llm.Usage{InputTokens: int64(in / 4), OutputTokens: int64(out / 4)}.Normalize()
	return &llm.Response{Message: msg, Usage: &u, FinishReason: finish, Model: "eval-scripted"}, nil
}

func (m *scriptedModel) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.StreamEvent, error] {
	return llm.StreamFromComplete(ctx, req, m.Complete)
}

// extract answers an extraction request from the scripted sessions.
func (m *scriptedModel) extract(prompt string) string {
	_, exchanges, _ := strings.Cut(prompt, "New exchanges:")
	for first, ops := range m.extractions {
		if strings.Contains(exchanges, "user: "+first) {
			return ops
		}
	}
	return `{"operations":[]}`
}

// summarize merges the previous summary with the user lines.
func summarize(prompt string) string {
	prev, exchanges, _ := strings.Cut(prompt, "New exchanges:")
	prev = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(prev), "Previous summary:"))
	var said []string
	for _, line := range strings.Split(exchanges, "\n") {
		if s, ok := strings.CutPrefix(line, "user: "); ok {
			said = append(said, s)
		}
	}
	out := "The user said: " + strings.Join(said, " ")
	if prev != "" {
		out = prev + " " + out
	}
	return out
}

// read answers with what the context holds beyond the system prompt and
// the question.
func read(msgs []llm.Message) string {
	question := -1
	for i, m := range msgs {
		if m.Role == llm.RoleUser {
			question = i
		}
	}
	var lines []string
	for i, m := range msgs {
		switch {
		case m.Role == llm.RoleSystem && m.Text() != SystemPrompt:
			for _, l := range strings.Split(m.Text(), "\n") {
				l = strings.TrimSpace(strings.TrimPrefix(l, "- "))
				if l != "" && !strings.HasPrefix(l, "[") {
					lines = append(lines, l)
				}
			}
		case m.Role == llm.RoleTool:
			for _, r := range m.ToolResults() {
				var res struct {
					Matches []struct {
						Content string `json:"content"`
					} `json:"matches"`
				}
				if r.IsError || json.Unmarshal([]byte(r.Content), &res) != nil {
					continue
				}
				for _, x := range res.Matches {
					lines = append(lines, x.Content)
				}
			}
		case m.Role == llm.RoleUser && i != question:
			// An earlier user turn kept by the memory is context too.
			lines = append(lines, m.Text())
		}
	}
	if len(lines) == 0 {
		return "I don't know."
	}
	return "From memory: " + strings.Join(lines, " | ")
}

func lastUser(msgs []llm.Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == llm.RoleUser {
			return msgs[i].Text()
		}
	}
	return ""
}

func hasToolResult(msgs []llm.Message) bool {
	for _, m := range msgs {
		if len(m.ToolResults()) > 0 {
			return true
		}
	}
	return false
}
