package codemode

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
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
	// Code is the program: the body of an async function (JavaScript) or
	// of a function (Python).
	Code string `json:"code"`
	// Language is the program's language (JavaScript or Python); ""
	// means JavaScript.
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

// The languages programs may be written in: a run offers JavaScript
// (jsprogram) unless its Runner says otherwise (see Languages).
const (
	JavaScript = "javascript"
	Python     = "python"
)

// Language names the language a program gives: JavaScript for "", "js" or
// "javascript", Python for "py", "python" or "python3" (any case), else
// the text as it is, lower-cased.
func Language(s string) string {
	switch l := strings.ToLower(strings.TrimSpace(s)); l {
	case "", "js", "javascript":
		return JavaScript
	case "py", "python", "python3":
		return Python
	default:
		return l
	}
}

// ParseLanguages reads the languages a run offers programs in, as a flag
// or an agent file gives them: names separated by commas ("javascript",
// "javascript,python", "python"; the spellings Language knows). "" is
// JavaScript alone. The result has no repeats, in the order given.
func ParseLanguages(s string) ([]string, error) {
	if strings.TrimSpace(s) == "" {
		return []string{JavaScript}, nil
	}
	var out []string
	for _, part := range strings.Split(s, ",") {
		l := Language(part)
		if strings.TrimSpace(part) == "" {
			return nil, fmt.Errorf("code-mode languages %q: an empty name; want javascript, python or both, separated by a comma", s)
		}
		if l != JavaScript && l != Python {
			return nil, fmt.Errorf("code-mode language %q: want javascript or python", strings.TrimSpace(part))
		}
		if !slices.Contains(out, l) {
			out = append(out, l)
		}
	}
	return out, nil
}

// Languages are the languages a runner runs, in the order the model is
// told of them: the runner's own, when it implements Languages() []string
// (as ByLanguage does), else JavaScript alone.
func Languages(r Runner) []string {
	if l, ok := r.(interface{ Languages() []string }); ok {
		if langs := l.Languages(); len(langs) > 0 {
			return langs
		}
	}
	return []string{JavaScript}
}

// ByLanguage is a Runner for a run that offers programs in several
// languages: it runs each program with the runner of its language
// (Language(Program.Language); "" is the first of Languages, JavaScript
// when offered), and refuses any other
// language with an error result naming those offered.
//
//	codemode.Config{Mode: codemode.Only, Runner: codemode.ByLanguage{
//		codemode.JavaScript: jsRunner, codemode.Python: pyRunner}}
type ByLanguage map[string]Runner

// Run runs p with the runner of its language.
func (b ByLanguage) Run(ctx context.Context, p Program) (tool.Result, error) {
	lang := Language(p.Language)
	if strings.TrimSpace(p.Language) == "" {
		// No language given: the first offered, as the schema says.
		if offered := b.Languages(); len(offered) > 0 {
			lang = offered[0]
		}
	}
	r := b[lang]
	if r == nil {
		offered := b.Languages()
		quoted := make([]string, len(offered))
		for i, l := range offered {
			quoted[i] = fmt.Sprintf("%q", l)
		}
		if len(quoted) == 0 {
			return tool.Errorf("this run has no program runner for any language"), nil
		}
		return tool.Errorf("programs in %q are not offered in this run: set \"language\" to %s", p.Language, strings.Join(quoted, " or ")), nil
	}
	p.Language = lang
	return r.Run(ctx, p)
}

// Languages are the languages b runs: JavaScript first, then the others
// in alphabetical order.
func (b ByLanguage) Languages() []string {
	var out []string
	if b[JavaScript] != nil {
		out = append(out, JavaScript)
	}
	var rest []string
	for l, r := range b {
		if l != JavaScript && r != nil {
			rest = append(rest, l)
		}
	}
	sort.Strings(rest)
	return append(out, rest...)
}

// inputSchema is run_program's input schema when programs are JavaScript
// only.
var inputSchema = json.RawMessage(`{"type":"object","properties":{` +
	`"code":{"type":"string","description":"The program: the body of an async JavaScript function. Call tools with await tools.NAME(args); return the answer."},` +
	`"language":{"type":"string","enum":["javascript"],"description":"The program's language (default javascript)."}` +
	`},"required":["code"],"additionalProperties":false}`)

// jsHowTo and pyHowTo tell the model how to write a program in each
// language.
const (
	jsHowTo = `Run a JavaScript program that calls your tools, to do in one step what would take many tool calls. ` +
		`The program is the body of an async function: ` +
		"`const o = await tools.get_order({id: 7})` calls a tool and gives its result (structured content, or its text: parsed when it is a JSON object or array); a refused or failed call throws an Error (catch it to go on); " +
		"`return` gives the program's result; `console.log` adds to its output. "
	pyHowTo = "The program is the body of a function: `o = tools.get_order(id=7)` calls a tool with keyword arguments named as the fields declared below, and gives its result as dicts and lists (structured content, or its text: parsed when it is a JSON object or array); " +
		"a refused or failed call raises ToolError (catch it to go on); `return` gives the program's result; `print` adds to its output. " +
		"Only the standard library's pure modules can be imported (json, re, math, datetime, collections, itertools, decimal, statistics, …). "
	commonHowTo = `Each call passes the same checks and approvals as a direct call. ` +
		`There is no require, import, fetch, file, network, timer or clock: only the tools below. ` +
		`On an error you get the message, line and column: fix the program and run it again.` + "\n\n"
	pyCommonHowTo = `Each call passes the same checks and approvals as a direct call. ` +
		`There is no file, network, timer or clock: only the tools below. ` +
		`On an error you get the message, line and column: fix the program and run it again.` + "\n\n"
)

// Spec is run_program's spec for a run whose model may call the tools
// specs from programs in JavaScript: how to write a program, and the
// tools' Declarations. With search, the run offers find_tools, and the
// tools it finds are declared from the next step on.
func Spec(specs []llm.ToolSpec, search bool) llm.ToolSpec {
	return SpecFor(specs, search, nil)
}

// SpecFor is Spec for a run offering programs in languages (Languages of
// its runner; nil is JavaScript alone). The tools are declared once, as
// TypeScript-style declarations, whatever the languages: a Python program
// passes a declaration's fields as keyword arguments.
func SpecFor(specs []llm.ToolSpec, search bool, languages []string) llm.ToolSpec {
	js, py := len(languages) == 0, false
	for _, l := range languages {
		switch l {
		case JavaScript:
			js = true
		case Python:
			py = true
		}
	}
	var b strings.Builder
	schema := inputSchema
	if len(languages) > 0 && !(len(languages) == 1 && languages[0] == JavaScript) {
		schema = languageSchema(languages)
	}
	switch {
	case py && js:
		b.WriteString(jsHowTo + "Or write it in Python, with \"language\": \"python\". " + pyHowTo + commonHowTo)
	case py:
		b.WriteString(`Run a Python program (with "language": "python") that calls your tools, to do in one step what would take many tool calls. ` + pyHowTo + pyCommonHowTo)
	default: // JavaScript (a language this package does not know gets its enum entry only)
		b.WriteString(jsHowTo + commonHowTo)
	}
	if search {
		b.WriteString("More tools exist than are declared here: find them with find_tools; those it finds are declared here from your next step.\n")
	}
	b.WriteString(Declarations(specs))
	return llm.ToolSpec{Name: ToolName, Description: b.String(), InputSchema: schema}
}

// languageSchema is run_program's input schema for a run offering
// programs in languages (the first is the default).
func languageSchema(languages []string) json.RawMessage {
	enum, _ := json.Marshal(languages)
	def := languages[0]
	return json.RawMessage(`{"type":"object","properties":{` +
		`"code":{"type":"string","description":"The program: the body of a function in its language. Call tools with tools.NAME(...); return the answer."},` +
		`"language":{"type":"string","enum":` + string(enum) + `,"description":"The program's language (default ` + def + `)."}` +
		`},"required":["code"],"additionalProperties":false}`)
}
