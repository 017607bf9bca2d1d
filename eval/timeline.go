package eval

import (
	"strings"
	"unicode/utf8"

	"github.com/autoagent-go/autoagent/llm"
)

// Failure is a failed run of a case, as reports show it.
type Failure struct {
	Run    int    `json:"run"` // its index among the case's k runs, from 0
	Reason string `json:"reason"`
	Steps  int    `json:"steps"`
	Tokens *int64 `json:"tokens"`
	// Timeline is what the run did, model turn by model turn.
	Timeline []TimelineStep `json:"timeline"`
}

// TimelineStep is one model turn of a run: what the model said and the
// tool calls it made, with what came back. Long texts are cut to
// timelineChars, keeping the head.
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

func failureOf(r int, run Run) Failure {
	f := Failure{Run: r, Reason: run.Reason, Steps: run.Steps, Tokens: run.Tokens}
	if run.Result != nil {
		f.Timeline = timelineOf(run.Result.Messages)
	}
	return f
}

// timelineOf reads the model turns of a transcript.
func timelineOf(msgs []llm.Message) []TimelineStep {
	traj := TrajectoryOf(msgs)
	byID := make(map[string]*Step, len(traj))
	for i := range traj {
		byID[traj[i].Call.ID] = &traj[i]
	}
	var out []TimelineStep
	for _, m := range msgs {
		if m.Role != llm.RoleAssistant {
			continue
		}
		ts := TimelineStep{Step: len(out) + 1, Text: cut(m.Text())}
		for _, c := range m.ToolCalls() {
			tc := TimelineCall{Name: c.Name, Arguments: cut(string(c.Arguments))}
			if s := byID[c.ID]; s != nil {
				tc.Result, tc.IsError, tc.Refused = cut(s.Result), s.IsError, s.Refused
			}
			ts.Calls = append(ts.Calls, tc)
		}
		out = append(out, ts)
	}
	return out
}

func cut(s string) string {
	s = strings.TrimSpace(s)
	if len(s) <= timelineChars {
		return s
	}
	i := timelineChars
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}
