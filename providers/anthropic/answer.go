package anthropic

import (
	"cmp"
	"fmt"

	"github.com/autoagent-go/autoagent/llm"
)

// Structured output (ResponseFormat json_schema) goes to Anthropic as a
// tool whose input schema is the answer's schema, as its documentation
// recommends: forced (tool_choice {"type":"tool"}) when the request has no
// tools of its own, else offered beside them as the final answer tool. Its
// call comes back as the answer's text (the JSON of its input), so the
// caller sees an answer, not a tool call.

// answerTool returns the name of req's answer tool, "" when there is none.
func answerTool(req *llm.Request) string {
	rf := req.ResponseFormat
	if rf == nil || rf.Type != "json_schema" || len(rf.Schema) == 0 {
		return ""
	}
	return cmp.Or(rf.Name, "answer")
}

// answerToolInstruction tells the model, when the answer tool is not
// forced, to answer through it.
func answerToolInstruction(name string) string {
	return fmt.Sprintf("When you have your final answer, give it by calling the tool `%s` with it as the input; do not write it as text.", name)
}

// foldAnswer turns the answer tool's call in m into a text part holding
// its input, and reports whether it did.
func foldAnswer(m llm.Message, name string) (llm.Message, bool) {
	if name == "" {
		return m, false
	}
	folded := false
	parts := make([]llm.Part, 0, len(m.Parts))
	for _, p := range m.Parts {
		if p.Type == llm.PartToolCall && p.ToolCall != nil && p.ToolCall.Name == name {
			parts = append(parts, llm.TextPart(string(p.ToolCall.Arguments)))
			folded = true
			continue
		}
		parts = append(parts, p)
	}
	m.Parts = parts
	return m, folded
}

// foldResponse is foldAnswer on a whole response: an answer given through
// the tool finishes as a stop, not as a tool call.
func foldResponse(resp *llm.Response, name string) *llm.Response {
	if resp == nil {
		return nil
	}
	m, folded := foldAnswer(resp.Message, name)
	if folded {
		resp.Message = m
		if len(m.ToolCalls()) == 0 && resp.FinishReason == llm.FinishToolCalls {
			resp.FinishReason = llm.FinishStop
		}
	}
	return resp
}
