package main

import (
	"fmt"
	"reflect"
	"strings"

	jsast "github.com/dop251/goja/ast"
	"github.com/dop251/goja/file"
	"github.com/dop251/goja/parser"
)

// A program whose only awaits are on its tool calls runs without them: a
// tool call settles at once (the host answers before tools.NAME returns),
// so awaiting it only costs a promise and a trip through the job queue.
// Such a program is run as a plain function in which tools.NAME returns
// the value, or throws the error, the promise would have settled with.
// See RATIONALE.md, "Why do some programs run without await?".
//
// The rewrite blanks the keywords: "async" of the wrapper and each
// "await" become spaces, so every line and column stay as the model wrote
// them. It is checked twice: the program must be eligible (syncEligible),
// and the rewritten source must parse to the same tree less the awaits
// (sameTree).

// syncPrefix is programPrefix with "async" blanked: same length, same
// lines.
const syncPrefix = "(      function () {\n"

// deniedNames are the names a program may reach the job queue, code from
// text, or what the awaits leave a trace in (a stack) through: a program
// naming one (as a variable, a property or a string) runs with its
// awaits. "tools" is allowed only as the tool call
// of an await (see eligibility.await).
var deniedNames = map[string]string{
	"Promise":     "it names Promise",
	"then":        "it names then (a thenable is resolved in a job)",
	"await":       "it uses await as a name",
	"eval":        "it names eval (code from text)",
	"Function":    "it names Function (code from text)",
	"constructor": "it names constructor (a function's constructor makes code from text)",
	"arguments":   "it names arguments (arguments.callee is the program's function)",
	"globalThis":  "it names globalThis",
	"stack":       "it names stack (a stack's bytecode offsets move without the awaits)",
	// Listing an error's own properties reads its stack without its name.
	"getOwnPropertyNames":       "it lists own properties (an error's stack among them)",
	"getOwnPropertyDescriptors": "it lists own properties (an error's stack among them)",
	"ownKeys":                   "it lists own properties (an error's stack among them)",
}

// eligibility walks a program's tree and collects its awaits; why says
// what made the program ineligible ("" while it is eligible).
type eligibility struct {
	src    string
	awaits []file.Idx
	depth  int // functions entered below the program's own
	why    string
}

// syncEligible reports whether the program body (the root function of the
// wrapped source src, parsed as prog) may run without its awaits; if so
// it returns the tree to run instead (a plain function), else why not.
func syncEligible(prog *jsast.Program, src string) (*jsast.Program, string) {
	root := rootFunction(prog)
	if root == nil || !root.Async || !strings.HasPrefix(src, programPrefix) {
		return nil, "it is not one async function"
	}
	e := &eligibility{src: src}
	e.walk(reflect.ValueOf(root.Body))
	if e.why != "" {
		return nil, e.why
	}
	if len(e.awaits) == 0 {
		// Nothing to save; the check below would cost a second parse.
		return nil, "it awaits nothing"
	}
	b := []byte(syncPrefix + src[len(programPrefix):])
	for _, at := range e.awaits {
		copy(b[int(at)-1:], "     ")
	}
	rewritten := string(b)
	sync, err := parser.ParseFile(nil, programName, rewritten, 0, parser.WithDisableSourceMaps)
	if err != nil {
		return nil, fmt.Sprintf("without its awaits it does not parse: %v", err)
	}
	if f := rootFunction(sync); f == nil || f.Async {
		return nil, "without its awaits it is not one plain function"
	}
	if !sameTree(prog, sync) {
		return nil, "without its awaits it parses to another program"
	}
	return sync, ""
}

// rootFunction is the function literal the wrapper makes of the program.
func rootFunction(p *jsast.Program) *jsast.FunctionLiteral {
	if len(p.Body) != 1 {
		return nil
	}
	st, ok := p.Body[0].(*jsast.ExpressionStatement)
	if !ok {
		return nil
	}
	f, _ := st.Expression.(*jsast.FunctionLiteral)
	return f
}

func (e *eligibility) fail(why string) {
	if e.why == "" {
		e.why = why
	}
}

var (
	identifierType = reflect.TypeOf(jsast.Identifier{})
	functionType   = reflect.TypeOf(jsast.FunctionLiteral{})
)

// walk visits every node below v: the tree's nodes are structs reached
// through pointers, interfaces and slices, so a node kind this file does
// not name is still searched for the constructs it does.
func (e *eligibility) walk(v reflect.Value) {
	if e.why != "" {
		return
	}
	switch v.Kind() {
	case reflect.Interface, reflect.Pointer:
		if v.IsNil() {
			return
		}
		if v.Kind() == reflect.Pointer && e.node(v.Interface()) {
			return
		}
		e.walk(v.Elem())
	case reflect.Slice:
		for i := range v.Len() {
			e.walk(v.Index(i))
		}
	case reflect.Struct:
		if v.Type() == identifierType {
			e.name(v.Interface().(jsast.Identifier).Name.String(), true)
			return
		}
		for i := range v.NumField() {
			e.walk(v.Field(i))
		}
	}
}

// node checks one node; it returns true when it has visited the node's
// children itself.
func (e *eligibility) node(n any) bool {
	switch n := n.(type) {
	case *jsast.AwaitExpression:
		e.await(n)
		return true
	case *jsast.FunctionLiteral:
		if n.Async {
			e.fail("it has an async function of its own")
			return true
		}
		e.depth++
		e.walk(reflect.ValueOf(*n))
		e.depth--
		return true
	case *jsast.ArrowFunctionLiteral:
		if n.Async {
			e.fail("it has an async function of its own")
			return true
		}
		e.depth++
		e.walk(reflect.ValueOf(*n))
		e.depth--
		return true
	case *jsast.WithStatement:
		e.fail("it uses with")
		return true
	case *jsast.DotExpression:
		// x.NAME: NAME is a property, not a variable: only the denied
		// names matter, tools among them not.
		e.walk(reflect.ValueOf(n.Left))
		e.name(n.Identifier.Name.String(), false)
		return true
	case *jsast.StringLiteral:
		// Property keys ({then: f}) and computed members (x["then"]) are
		// string literals.
		e.name(n.Value.String(), false)
		return true
	case *jsast.TemplateElement:
		e.name(n.Parsed.String(), false)
		return true
	}
	return false
}

// name checks a name the program uses; variable says it is a reference
// (or a binding), where "tools" is denied too.
func (e *eligibility) name(s string, variable bool) {
	if why, ok := deniedNames[s]; ok {
		e.fail(why)
	}
	if variable && s == "tools" {
		e.fail("it uses tools other than as await tools.NAME(…)")
	}
}

// await accepts `await tools.NAME(args)` written as such (the keyword
// followed by blanks, then the call), in the program's own function.
func (e *eligibility) await(n *jsast.AwaitExpression) {
	if e.depth > 0 {
		e.fail("it awaits inside a nested function")
		return
	}
	call, ok := n.Argument.(*jsast.CallExpression)
	if !ok {
		e.fail("it awaits something other than a tool call")
		return
	}
	callee, ok := call.Callee.(*jsast.DotExpression)
	if !ok {
		e.fail("it awaits something other than a tool call")
		return
	}
	if obj, ok := callee.Left.(*jsast.Identifier); !ok || obj.Name != "tools" {
		e.fail("it awaits something other than a tool call")
		return
	}
	at, arg := int(n.Await)-1, int(call.Idx0())-1
	if at < 0 || arg > len(e.src) || at+5 > arg || e.src[at:at+5] != "await" || strings.Trim(e.src[at+5:arg], " \t\r\n") != "" {
		e.fail("an await is not written `await tools.NAME(…)`")
		return
	}
	e.name(callee.Identifier.Name.String(), false)
	e.walk(reflect.ValueOf(call.ArgumentList))
	e.awaits = append(e.awaits, n.Await)
}

// sameTree reports whether b is a with its awaits replaced by their
// arguments and its root function not async: the rewrite changed nothing
// else, not even a position.
func sameTree(a, b *jsast.Program) bool {
	ra, rb := rootFunction(a), rootFunction(b)
	if ra == nil || rb == nil {
		return false
	}
	// The root functions differ where "async" was: the async function
	// starts at that keyword, the plain one at "function".
	var da, db strings.Builder
	dumpTree(&da, reflect.ValueOf(*ra), true)
	dumpTree(&db, reflect.ValueOf(*rb), false)
	return da.String() == db.String() && len(a.Body) == len(b.Body) && rb.Function == ra.Function+file.Idx(len("async "))
}

// dumpTree writes v's tree; unwrapAwait writes an await as its argument.
// The source texts kept in function nodes (Source) are left out: they
// hold the blanked keywords. A function's Async and its start (Function)
// are left out too, and checked apart: the root function is the one node
// where they differ (the walk refused every other async function).
func dumpTree(w *strings.Builder, v reflect.Value, unwrapAwait bool) {
	switch v.Kind() {
	case reflect.Interface, reflect.Pointer:
		if v.IsNil() {
			w.WriteString("nil ")
			return
		}
		if a, ok := v.Interface().(*jsast.AwaitExpression); ok && unwrapAwait {
			dumpTree(w, reflect.ValueOf(a.Argument), unwrapAwait)
			return
		}
		dumpTree(w, v.Elem(), unwrapAwait)
	case reflect.Slice:
		fmt.Fprintf(w, "[%d ", v.Len())
		for i := range v.Len() {
			dumpTree(w, v.Index(i), unwrapAwait)
		}
		w.WriteString("] ")
	case reflect.Struct:
		t := v.Type()
		w.WriteString(t.Name())
		w.WriteString("{")
		for i := range v.NumField() {
			f := t.Field(i)
			if f.Name == "Source" || f.Name == "Async" || f.Name == "Function" && t == functionType || !f.IsExported() {
				continue
			}
			w.WriteString(f.Name)
			w.WriteString(":")
			dumpTree(w, v.Field(i), unwrapAwait)
		}
		w.WriteString("} ")
	default:
		fmt.Fprintf(w, "%v ", v.Interface())
	}
}
