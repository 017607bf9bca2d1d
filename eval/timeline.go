package eval

import (
	"strings"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/trace"
)

// Failure is a failed run of a case, as reports show it.
type Failure struct {
	Run    int    `json:"run"` // its index among the case's k runs, from 0
	Reason string `json:"reason"`
	Steps  int    `json:"steps"`
	Tokens *int64 `json:"tokens"`
	// Timeline is what the run did, model turn by model turn; empty when
	// it ended before the model answered.
	Timeline []TimelineStep `json:"timeline"`

	tokens int64 // what Tokens points at, for RunK's failures
}

// TimelineStep is one model turn of a run: what the model said and the
// tool calls it made, with what came back. Texts are redacted as traces
// are (API keys, tokens, secret-named fields) and cut to timelineChars
// runes, keeping the head.
type TimelineStep struct {
	Step  int            `json:"step"`
	Text  string         `json:"text,omitempty"`
	Calls []TimelineCall `json:"calls,omitempty"`
}

// TimelineCall is one tool call of a TimelineStep.
type TimelineCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
	Result    string `json:"result"`
	IsError   bool   `json:"is_error,omitempty"`
	Refused   bool   `json:"refused,omitempty"`
}

const timelineChars = 400

// assistantTurns counts the model turns of a transcript.
func assistantTurns(msgs []llm.Message) int {
	n := 0
	for _, m := range msgs {
		if m.Role == llm.RoleAssistant {
			n++
		}
	}
	return n
}

// appendTimeline appends the model turns of a transcript to dst. It runs
// once per failed run and keeps nothing of the transcript but the cut
// texts.
func appendTimeline(dst []TimelineStep, msgs []llm.Message) []TimelineStep {
	var results map[string]llm.ToolResult
	for _, m := range msgs {
		for _, r := range m.ToolResults() {
			if results == nil {
				results = map[string]llm.ToolResult{}
			}
			results[r.CallID] = r
		}
	}
	start := len(dst)
	for _, m := range msgs {
		if m.Role != llm.RoleAssistant {
			continue
		}
		ts := TimelineStep{Step: len(dst) - start + 1, Text: cut(m.Text())}
		for _, c := range m.ToolCalls() {
			r := results[c.ID]
			ts.Calls = append(ts.Calls, TimelineCall{Name: c.Name, Arguments: cut(string(c.Arguments)),
				Result: cut(r.Content), IsError: r.IsError, Refused: refusedBeforeRunning(r)})
		}
		dst = append(dst, ts)
	}
	return dst
}

// cut is a timeline's text: redacted as traces are (reports get shared)
// and cut to timelineChars runes.
func cut(s string) string {
	return trace.Preview(strings.TrimSpace(s), timelineChars)
}
