package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/dop251/goja"
)

// maxCallStack bounds JavaScript recursion: past it the script gets a
// RangeError it may catch, long before the Go stack or the sandbox's
// memory limit would end the call less clearly.
const maxCallStack = 10000

// scriptName names the script in stack traces ("at run (tool.js:3:9)").
const scriptName = "tool.js"

// bridge calls a host tool for tools.call: it takes the tool name and the
// JSON arguments (as JSON.stringify would make them, valid only until it
// returns: a program's are the encoder's buffer, copied once, into the
// request) and returns the tool's MCP result JSON, which the next call may
// overwrite (the host bridge reads every result into one buffer): use it,
// or copy what is kept, first. Nil when the engine was built without the
// tool bridge.
type bridge func(name string, args []byte) ([]byte, error)

// scriptError is a failure the model should read: a syntax error, a thrown
// exception, a run that returned nothing JSON can carry.
type scriptError struct{ msg string }

func (e *scriptError) Error() string { return e.msg }

func failf(format string, args ...any) error {
	return &scriptError{msg: fmt.Sprintf(format, args...)}
}

// runScript evaluates script in a fresh runtime, calls its run function
// with the JSON arguments and returns the JSON of the value it returned.
// Every failure is a *scriptError whose text ends with the tail of the
// script's console output.
func runScript(script string, arguments []byte, call bridge) ([]byte, error) {
	vm := newRuntime()
	con := newConsole()
	out, err := evaluate(vm, con, script, arguments, call)
	if err != nil {
		msg := err.Error()
		if tail := con.tail(); tail != "" {
			msg += "\nconsole output:\n" + tail
		}
		return nil, &scriptError{msg: msg}
	}
	return out, nil
}

// checkScript compiles and loads script and checks that it defines run.
func checkScript(script string) error {
	vm := newRuntime()
	con := newConsole()
	_, _, err := load(vm, con, script, nil)
	if err != nil {
		msg := err.Error()
		if tail := con.tail(); tail != "" {
			msg += "\nconsole output:\n" + tail
		}
		return &scriptError{msg: msg}
	}
	return nil
}

// load prepares the runtime and evaluates the script's top level. It
// returns run and the original JSON.parse and JSON.stringify.
func load(vm *goja.Runtime, con *console, script string, call bridge) (run goja.Callable, j jsonFuncs, err error) {
	// Take the built-ins the runner relies on before any script code runs:
	// the script may replace or poison the globals, but these references
	// stay the originals.
	if j, err = originalJSON(vm); err != nil {
		return nil, j, err
	}
	if err := con.install(vm, j.stringify); err != nil {
		return nil, j, err
	}
	if err := installTools(vm, j.stringify, call); err != nil {
		return nil, j, err
	}
	prog, err := goja.Compile(scriptName, script, false)
	if err != nil {
		return nil, j, failf("the script does not compile: %v", err)
	}
	if _, err := vm.RunProgram(prog); err != nil {
		return nil, j, explain("the script failed while loading", err)
	}
	run, ok := goja.AssertFunction(vm.Get("run"))
	if !ok {
		return nil, j, failf("the script must define a function run(args) at top level; it defines none")
	}
	return run, j, nil
}

func evaluate(vm *goja.Runtime, con *console, script string, arguments []byte, call bridge) ([]byte, error) {
	run, j, err := load(vm, con, script, call)
	if err != nil {
		return nil, err
	}
	if len(arguments) == 0 {
		arguments = []byte("{}")
	}
	args, err := j.parse(goja.Undefined(), vm.ToValue(string(arguments)))
	if err != nil {
		return nil, fmt.Errorf("jsengine: decoding the arguments: %w", err)
	}
	ret, err := run(goja.Undefined(), args)
	if err != nil {
		return nil, explain("run threw", err)
	}
	ret, err = settle(ret)
	if err != nil {
		return nil, err
	}
	s, err := j.stringify(goja.Undefined(), ret)
	if err != nil {
		return nil, explain("run returned a value JSON.stringify cannot encode", err)
	}
	if goja.IsUndefined(s) {
		return nil, failf("run returned %s, which is not a JSON value; return an object, array, string, number, boolean or null", typeName(ret))
	}
	text, ok := s.Export().(string)
	if !ok || !json.Valid([]byte(text)) {
		return nil, failf("run returned a value whose JSON encoding is invalid")
	}
	return []byte(text), nil
}

// jsonFuncs are the runtime's original JSON.parse and JSON.stringify.
type jsonFuncs struct{ parse, stringify goja.Callable }

func originalJSON(vm *goja.Runtime) (jsonFuncs, error) {
	o := vm.Get("JSON").ToObject(vm)
	parse, ok1 := goja.AssertFunction(o.Get("parse"))
	stringify, ok2 := goja.AssertFunction(o.Get("stringify"))
	if !ok1 || !ok2 {
		return jsonFuncs{}, errors.New("jsengine: the runtime lacks JSON.parse or JSON.stringify")
	}
	return jsonFuncs{parse, stringify}, nil
}

// settle unwraps a promise returned by an async run. Promise jobs run when
// the outermost call returns, and a script has nothing asynchronous to
// wait for, so a promise still pending now never settles.
func settle(v goja.Value) (goja.Value, error) {
	return settleAs(v, "run's promise was rejected", "run returned a promise that never settles (a script has no timers or I/O to wait for)")
}

// settleAs unwraps a promise: its value, or an error starting with
// rejected (and the reason) or saying pending.
func settleAs(v goja.Value, rejected, pending string) (goja.Value, error) {
	p, ok := v.Export().(*goja.Promise)
	if !ok {
		return v, nil
	}
	switch p.State() {
	case goja.PromiseStateFulfilled:
		return p.Result(), nil
	case goja.PromiseStateRejected:
		return nil, failf("%s: %s", rejected, valueText(p.Result()))
	}
	return nil, failf("%s", pending)
}

// explain explains a failure from goja: an exception, a stack overflow,
// an interrupt.
func explain(what string, err error) error {
	var so *goja.StackOverflowError
	if errors.As(err, &so) {
		return failf("%s: RangeError: maximum call stack size (%d) exceeded", what, maxCallStack)
	}
	var stopped *goja.InterruptedError
	if errors.As(err, &stopped) {
		return failf("the program was stopped: %v", stopped.Value())
	}
	var ex *goja.Exception
	if errors.As(err, &ex) {
		return failf("%s: %s", what, strings.TrimSpace(ex.String()))
	}
	return failf("%s: %v", what, err)
}

func valueText(v goja.Value) string {
	if v == nil {
		return "undefined"
	}
	if o, ok := v.(*goja.Object); ok {
		if stack := o.Get("stack"); stack != nil && !goja.IsUndefined(stack) {
			return stack.String()
		}
	}
	return v.String()
}

// typeName names what JSON.stringify turns into undefined.
func typeName(v goja.Value) string {
	if v == nil || goja.IsUndefined(v) {
		return "undefined"
	}
	if _, ok := goja.AssertFunction(v); ok {
		return "a function"
	}
	return "a symbol"
}
