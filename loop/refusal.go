package loop

import (
	"github.com/autoagent-go/autoagent/loop/refusal"
	"github.com/autoagent-go/autoagent/tool"
)

// refusalResult is rf as the error result a tool calling tools
// (CallNested) gets.
func refusalResult(rf refusal.Refusal) tool.Result { return tool.Errorf("%s", rf.Text) }
