package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/dop251/goja"
	jsast "github.com/dop251/goja/ast"
	"github.com/dop251/goja/parser"
)

// programName names a code-mode program in positions ("program.js:3:9").
const programName = "program.js"

// programPrefix and programSuffix make the program the body of an async
// function. The prefix is a line of its own, so the program's line n is
// the source's line n+1 and its columns are unchanged: positions are
// shifted back by one line before anyone reads them (fixPositions).
const (
	programPrefix = "(async function () {\n"
	programSuffix = "\n})"
)

// programInput is what a code-mode program call carries: the program, its
// language, and the names of the tools it may call as tools.NAME(args).
type programInput struct {
	Code     string   `json:"code"`
	Language string   `json:"language"`
	Tools    []string `json:"tools"`
}

// programOutput is a program's result: the value it returned (null when
// it returned nothing) and what it wrote with console.log.
type programOutput struct {
	Result  json.RawMessage `json:"result"`
	Console string          `json:"console,omitempty"`
}

// runProgram runs a code-mode program: the body of an async function in
// which tools.NAME(args) calls the host tool NAME through call and gives a
// promise of its structured content (or text), rejected with an Error
// when the tool reports one. It returns the JSON of a programOutput. A
// failure is a *scriptError that says what failed and where (line and
// column of the program), followed by the end of the console output.
func runProgram(arguments []byte, call bridge) ([]byte, error) {
	return runProgramAs(arguments, call, true)
}

// runProgramAs is runProgram; allowSync false keeps every program's awaits
// (the tests compare both ways).
func runProgramAs(arguments []byte, call bridge, allowSync bool) ([]byte, error) {
	var in programInput
	if err := json.Unmarshal(arguments, &in); err != nil {
		return nil, failf("the program call's arguments are not {\"code\": \"...\"}: %v", err)
	}
	switch strings.ToLower(in.Language) {
	case "", "javascript", "js":
	default:
		return nil, failf("programs are written in JavaScript; %q is not offered here (omit language or set it to \"javascript\")", in.Language)
	}
	if strings.TrimSpace(in.Code) == "" {
		return nil, failf("the program is empty: put the JavaScript in \"code\" (the body of an async function: await tools.NAME(args), return the answer)")
	}
	vm := newRuntime()
	con := newConsole()
	out, err := evaluateProgram(vm, con, in, call, allowSync)
	if err != nil {
		msg := fixPositions(err.Error())
		if tail := con.tail(); tail != "" {
			msg += "\nconsole output:\n" + tail
		}
		return nil, &scriptError{msg: msg}
	}
	return out, nil
}

func evaluateProgram(vm *goja.Runtime, con *console, in programInput, call bridge, allowSync bool) ([]byte, error) {
	j, err := originalJSON(vm)
	if err != nil {
		return nil, err
	}
	if err := con.install(vm, j.stringify); err != nil {
		return nil, err
	}
	src := programPrefix + in.Code + programSuffix
	ast, err := goja.Parse(programName, src, parser.WithDisableSourceMaps)
	if err != nil {
		return nil, failf("the program does not compile: %v", err)
	}
	if !isOneFunction(ast) {
		// The program closed the function it is put in and went on
		// outside it: whatever it meant, it is not a function body.
		return nil, failf("the program must be the body of a function (statements, ending with return VALUE); it closes the function it is put in")
	}
	sync := false
	var literals []literalCall
	if allowSync {
		if plain, _ := syncEligible(ast, src); plain != nil {
			ast, sync = plain, true
			literals = literalCalls(ast, in.Tools)
		}
	}
	enc, err := newArgsEncoder(vm)
	if err != nil {
		return nil, err
	}
	hidden, err := installProgramTools(vm, enc, in.Tools, literals, call, sync)
	if err != nil {
		return nil, err
	}
	prog, err := goja.CompileAST(ast, false)
	if err != nil {
		return nil, failf("the program does not compile: %v", err)
	}
	fn, err := vm.RunProgram(prog)
	if err != nil {
		return nil, explain("the program does not compile", err)
	}
	body, ok := goja.AssertFunction(fn)
	if !ok {
		return nil, failf("the program must be the body of a function (statements, ending with return VALUE)")
	}
	ret, err := body(goja.Undefined(), hidden...)
	if err != nil {
		return nil, thrown(err, sync)
	}
	if !sync {
		ret, err = settleProgram(ret)
		if err != nil {
			return nil, err
		}
	}
	result := json.RawMessage("null")
	if ret != nil && !goja.IsUndefined(ret) {
		s, err := j.stringify(goja.Undefined(), ret)
		if err != nil {
			return nil, explain("the program returned a value JSON.stringify cannot encode", err)
		}
		if !goja.IsUndefined(s) {
			text, ok := s.Export().(string)
			if !ok || !json.Valid([]byte(text)) {
				return nil, failf("the program returned a value whose JSON encoding is invalid")
			}
			result = json.RawMessage(text)
		}
	}
	return json.Marshal(programOutput{Result: result, Console: con.tail()})
}

// isOneFunction tells whether the parsed source is what the wrapper makes
// of a function body: one statement, an async function expression.
func isOneFunction(p *jsast.Program) bool {
	if len(p.Body) != 1 {
		return false
	}
	st, ok := p.Body[0].(*jsast.ExpressionStatement)
	if !ok {
		return false
	}
	f, ok := st.Expression.(*jsast.FunctionLiteral)
	return ok && f.Async && !f.Generator
}

// thrown explains what ended a program's function with err. An async
// function turns what the program throws into its promise's rejection,
// which settleProgram reads; only what no catch stops (an interrupt, a
// stack overflow) comes out here. A plain function throws it all: what
// the program threw is said as its rejection would be.
func thrown(err error, sync bool) error {
	var ex *goja.Exception
	var so *goja.StackOverflowError
	var stopped *goja.InterruptedError
	if sync && errors.As(err, &ex) && !errors.As(err, &so) && !errors.As(err, &stopped) {
		return failf("the program threw: %s", valueText(ex.Value()))
	}
	return explain("the program threw", err)
}

// settleProgram unwraps the promise the program's function returned.
func settleProgram(v goja.Value) (goja.Value, error) {
	return settleAs(v, "the program threw", "the program awaits a promise that never settles (a program has no timers or I/O but its tool calls, which settle at once)")
}

// installProgramTools defines tools: an object without a prototype whose
// property NAME, for each name, is a function calling the host tool NAME.
// The object is frozen: a program cannot redefine or add to it. With sync
// (a program run without its awaits, see syncEligible) tools.NAME returns
// the value its promise would have been fulfilled with, or throws the
// error it would have been rejected with. It returns, for each of
// literals, the function its hidden parameter gets: the tool called with
// the keys the literal's source gives.
func installProgramTools(vm *goja.Runtime, enc *argsEncoder, names []string, literals []literalCall, call bridge, sync bool) ([]goja.Value, error) {
	errorCtor, ok := goja.AssertConstructor(vm.Get("Error"))
	if !ok {
		return nil, errors.New("jsengine: the runtime lacks Error")
	}
	tools := vm.NewObject()
	if err := tools.SetPrototype(nil); err != nil {
		return nil, err
	}
	members := memberNames{}
	toolFunc := func(name string, keys []string) goja.Value {
		// settle calls the tool; it returns its value, or the error to
		// throw or reject with.
		settle := func(fc goja.FunctionCall) (goja.Value, *goja.Object) {
			v, msg, stop := callProgramTool(vm, enc, members, call, name, fc.Argument(0), keys)
			if stop {
				// The run refuses every further call of this program:
				// stop it, rather than let it catch a million refusals.
				vm.Interrupt(msg)
			}
			if msg == "" {
				return v, nil
			}
			e, err := errorCtor(nil, vm.ToValue(msg))
			if err != nil {
				panic(err)
			}
			_ = e.Set("name", "ToolError")
			_ = e.Set("tool", name)
			return nil, e
		}
		// One function for both ways, so the stack a ToolError
		// carries names the same frame.
		fn := func(fc goja.FunctionCall) goja.Value {
			if sync {
				v, e := settle(fc)
				if e != nil {
					panic(e)
				}
				return v
			}
			p, resolve, reject := vm.NewPromise()
			if v, e := settle(fc); e != nil {
				_ = reject(e)
			} else {
				_ = resolve(v)
			}
			return vm.ToValue(p)
		}
		return vm.ToValue(fn)
	}
	for _, name := range names {
		if err := tools.DefineDataProperty(name, toolFunc(name, nil), goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_TRUE); err != nil {
			return nil, err
		}
	}
	freeze, ok := goja.AssertFunction(vm.Get("Object").ToObject(vm).Get("freeze"))
	if !ok {
		return nil, errors.New("jsengine: the runtime lacks Object.freeze")
	}
	if _, err := freeze(goja.Undefined(), tools); err != nil {
		return nil, err
	}
	hidden := make([]goja.Value, len(literals))
	for i, l := range literals {
		hidden[i] = toolFunc(l.tool, l.keys)
	}
	return hidden, vm.GlobalObject().DefineDataProperty("tools", tools, goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_TRUE)
}

// stopKinds are the kinds of the run's refusals after which a program
// must not go on: the run's refusal of a program past its call limit
// (loop's ProgramCallLimit), and a durable run's answer to a call its
// program made past the record of its calls (loop's ProgramSuspended: the
// call runs in the workflow, and the program runs again). The engine then
// stops the program, which no catch can resume. The kind is the host's
// field of the reply, never the text: a tool whose own error reads
// "ProgramSuspended: …" is an ordinary failure the program may catch.
var stopKinds = []string{"ProgramCallLimit", "ProgramSuspended"}

// stops reports whether the refusal of kind ends the program.
func stops(kind string) bool { return slices.Contains(stopKinds, kind) }

// callProgramTool calls the host tool name with args; it returns the
// tool's structured content (or text), or the message of its failure, and
// whether the failure ends the program. keys, when not nil, are the keys
// of args, an object literal's (see literalCalls).
func callProgramTool(vm *goja.Runtime, enc *argsEncoder, members memberNames, call bridge, name string, args goja.Value, keys []string) (goja.Value, string, bool) {
	if call == nil {
		return nil, fmt.Sprintf("tools.%s: this engine was built without the host-tool bridge", name), false
	}
	argsText := emptyArgs
	if !goja.IsUndefined(args) && !goja.IsNull(args) {
		// Encoded as JSON.stringify would, what the program's code
		// throws meanwhile (a getter, a toJSON) thrown on.
		text, ok := enc.encodeWith(args, keys)
		if !ok {
			return nil, fmt.Sprintf("tools.%s: the arguments must be an object, like {id: 7}", name), false
		}
		argsText = text
	}
	raw, err := call(name, argsText)
	if err != nil {
		return nil, fmt.Sprintf("tools.%s: %v", name, err), false
	}
	// The content is decoded only when it is what the program gets: a
	// result with structured content carries the same JSON again as
	// text, and unescaping it costs more than the call's crossing.
	res, err := scanResult(raw)
	if err != nil {
		return nil, fmt.Sprintf("tools.%s: the host returned an invalid result: %v", name, err), false
	}
	if !res.isError && len(res.structured) > 0 && string(res.structured) != "null" {
		v, err := decodeJSONNames(vm, members, res.structured)
		if err != nil {
			return nil, fmt.Sprintf("tools.%s: the host returned an invalid result: %v", name, err), false
		}
		return v, "", false
	}
	text, err := contentText(res.content)
	if err != nil {
		return nil, fmt.Sprintf("tools.%s: the host returned an invalid result: %v", name, err), false
	}
	if res.isError {
		return nil, fmt.Sprintf("tools.%s: %s", name, text), stops(res.refusal)
	}
	// Many tools (MCP servers, modules) give JSON as text only: an
	// object or array is given to the program parsed, as its structured
	// content would be; any other text as the string it is.
	if t := strings.TrimSpace(text); len(t) > 1 && (t[0] == '{' && t[len(t)-1] == '}' || t[0] == '[' && t[len(t)-1] == ']') {
		if v, err := decodeJSONNames(vm, members, []byte(t)); err == nil {
			return v, "", false
		}
	}
	return vm.ToValue(text), "", false
}

// emptyArgs are the arguments of a call given none (read, never written).
var emptyArgs = []byte("{}")

// positionRE finds a position in the program's source as goja writes it:
// "program.js:3:9" in stack traces, "program.js: Line 3:9" in syntax
// errors (a stack frame's position is followed by its bytecode offset,
// which means nothing to the program's writer).
var positionRE = regexp.MustCompile(`program\.js(?:: Line |:)(\d+):(\d+)(?:\(\d+\))?`)

// nativeFrameRE finds a stack frame of the engine's own Go code (the
// tools' functions), which says nothing to the program's writer.
var nativeFrameRE = regexp.MustCompile(`\n\s*at [^\n]*\(native\)`)

// fixPositions turns the source's positions into the program's (one line
// less, for the wrapper's first line) and names them plainly.
func fixPositions(msg string) string {
	msg = nativeFrameRE.ReplaceAllString(msg, "")
	return positionRE.ReplaceAllStringFunc(msg, func(m string) string {
		sub := positionRE.FindStringSubmatch(m)
		line, err1 := strconv.Atoi(sub[1])
		col, err2 := strconv.Atoi(sub[2])
		if err1 != nil || err2 != nil {
			return m
		}
		if line > 1 {
			line--
		}
		return fmt.Sprintf("line %d, column %d", line, col)
	})
}
