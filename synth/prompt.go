package synth

import (
	"fmt"
	"strings"

	"github.com/autoagent-go/autoagent/llm"
)

// writerSystem is the writer model's system prompt; the back-end's guide
// and the capability ceiling are appended.
const writerSystem = `You write small, self-contained tools for an AI agent.
Answer with one JSON object and nothing else (no markdown, no prose). Its keys:
- "name": a short snake_case name for the tool;
- "description": what the tool does and returns, written for the model that will call it;
- "input_schema": the JSON Schema (type "object") of the tool's arguments;
- "capabilities": the grants the tool needs, usually none (an empty list);
- "source": the complete source code;
- "self_tests": 1 to 5 tests, each {"args": {...}, "expect": <the exact JSON value returned>} or {"args": {...}, "expect_contains": "<text the JSON result must contain>"}.
The self-tests run in the sandbox before the tool is accepted; a failing self-test rejects the tool.`

// writerRequest builds the request for one draft.
func (b *Builder) writerRequest(req Request, be Backend) *llm.Request {
	var sys strings.Builder
	sys.WriteString(writerSystem)
	sys.WriteString("\n\n")
	sys.WriteString(be.Guide())
	sys.WriteString("\n\nCapabilities this host allows a tool: ")
	if len(b.opts.Ceiling) == 0 {
		sys.WriteString("none; ask for none.")
	} else {
		for i, g := range b.opts.Ceiling {
			if i > 0 {
				sys.WriteString(", ")
			}
			sys.WriteString(g.String())
		}
		sys.WriteString(". Ask only for what the tool needs.")
	}
	var user strings.Builder
	fmt.Fprintf(&user, "Write a %s tool for this capability:\n%s\n", be.Language(), strings.TrimSpace(req.Capability))
	if req.Name != "" {
		fmt.Fprintf(&user, "\nName it %s.\n", req.Name)
	}
	if req.InputSchema != nil {
		fmt.Fprintf(&user, "\nUse exactly this input_schema: %s\n", compactJSON(req.InputSchema))
	}
	if req.Capabilities != nil {
		fmt.Fprintf(&user, "\nUse exactly these capabilities: %s\n", mustJSON(req.Capabilities))
	}
	temp := 0.0
	return &llm.Request{
		Model: b.opts.Model,
		Messages: append([]llm.Message{
			llm.SystemText(sys.String()),
			llm.UserText(user.String()),
		}, req.history...),
		Temperature: &temp,
		MaxTokens:   b.opts.MaxTokens,
		ResponseFormat: &llm.ResponseFormat{
			Type: "json_schema", Name: "tool", Schema: draftSchema,
		},
	}
}
