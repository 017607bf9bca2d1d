package loop

import (
	"github.com/autoagent-go/autoagent/loop/refusal"
	"github.com/autoagent-go/autoagent/tool"
)

// refusalResult is rf as the error result a tool calling tools
// (CallNested) gets: its text, and its kind as the result's Refusal, which
// a program engine reads to stop a program (never the text).
func refusalResult(rf refusal.Refusal) tool.Result {
	res := tool.Errorf("%s", rf.Text)
	res.Refusal = string(rf.Kind)
	return res
}
