package codemode

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/tool"
)

// ToolName is the tool a run in code mode offers the model.
const ToolName = "run_program"

// Mode says whether and how a run offers run_program.
type Mode string

// The modes. The zero value is Off.
const (
	// Off offers no program tool.
	Off Mode = ""
	// Also offers run_program beside the run's tools.
	Also Mode = "also"
	// Only offers run_program alone (and find_tools when the run searches
	// its tools): the model calls the run's tools from programs.
	Only Mode = "only"
)

// ParseMode reads a mode as a flag or an agent file gives it: "off" (or
// ""), "also" or "only".
func ParseMode(s string) (Mode, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "off":
		return Off, nil
	case "also":
		return Also, nil
	case "only":
		return Only, nil
	}
	return Off, fmt.Errorf("code mode %q: want off, also or only", s)
}

// String is the mode as ParseMode reads it.
func (m Mode) String() string {
	if m == Off {
		return "off"
	}
	return string(m)
}

// Config is an agent's code mode (loop.Agent.CodeMode). Its zero value is
// off.
type Config struct {
	// Mode is Off, Also or Only.
	Mode Mode
	// Runner runs the programs; required unless Mode is Off
	// (jsprogram.New makes one).
	Runner Runner
	// MaxCalls bounds the tool calls of one program: past it, calls are
	// refused (the program sees a ToolError). 0 means DefaultMaxCalls;
	// the run's own bounds (MaxToolCalls, the loop guard) apply too.
	MaxCalls int
}

// DefaultMaxCalls is the tool calls one program may make by default.
const DefaultMaxCalls = 200

// Program is one run of run_program.
type Program struct {
	// Code is the program: the body of an async function.
	Code string `json:"code"`
	// Language is the program's language; "" means JavaScript.
	Language string `json:"language,omitempty"`
	// Tools are the names the program may call as tools.NAME(args): the
	// tools declared to the model.
	Tools []string `json:"tools"`
}

// Runner runs programs. The context is the run_program call's: the calls
// a program makes go to the run through it (the host's tool_call wired to
// loop.CallNested). A program's failure (an exception, a syntax error, a
// limit) is a Result with IsError set and a message saying what and where;
// the error is for the runner's own failures.
type Runner interface {
	Run(ctx context.Context, p Program) (tool.Result, error)
}

// Input is the arguments the model gives run_program.
type Input struct {
	Code     string `json:"code"`
	Language string `json:"language,omitempty"`
}

// inputSchema is run_program's input schema.
var inputSchema = json.RawMessage(`{"type":"object","properties":{` +
	`"code":{"type":"string","description":"The program: the body of an async JavaScript function. Call tools with await tools.NAME(args); return the answer."},` +
	`"language":{"type":"string","enum":["javascript"],"description":"The program's language (default javascript)."}` +
	`},"required":["code"],"additionalProperties":false}`)

// Spec is run_program's spec for a run whose model may call the tools
// specs from programs: how to write a program, and the tools'
// Declarations. With search, the run offers find_tools, and the tools it
// finds are declared from the next step on.
func Spec(specs []llm.ToolSpec, search bool) llm.ToolSpec {
	var b strings.Builder
	b.WriteString(`Run a JavaScript program that calls your tools, to do in one step what would take many tool calls. ` +
		`The program is the body of an async function: ` +
		"`const o = await tools.get_order({id: 7})` calls a tool and gives its result (structured content, or its text: parsed when it is a JSON object or array); a refused or failed call throws an Error (catch it to go on); " +
		"`return` gives the program's result; `console.log` adds to its output. " +
		`Each call passes the same checks and approvals as a direct call. ` +
		`There is no require, import, fetch, file, network, timer or clock: only the tools below. ` +
		`On an error you get the message, line and column: fix the program and run it again.` + "\n\n")
	if search {
		b.WriteString("More tools exist than are declared here: find them with find_tools; those it finds are declared here from your next step.\n")
	}
	b.WriteString(Declarations(specs))
	return llm.ToolSpec{Name: ToolName, Description: b.String(), InputSchema: inputSchema}
}
