package main

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/dop251/goja"
	jsast "github.com/dop251/goja/ast"
	"github.com/dop251/goja/parser"
)

// literalsOf parses code as an eligible program and returns the hidden
// members literalCalls makes of it, as "tool key,key".
func literalsOf(t *testing.T, code string, tools ...string) []string {
	t.Helper()
	src := programPrefix + code + programSuffix
	if ok, why := eligible(t, code); !ok {
		t.Fatalf("%s: not eligible: %s", code, why)
	}
	parsed, err := goja.Parse(programName, src, parser.WithDisableSourceMaps)
	if err != nil {
		t.Fatal(err)
	}
	ast, _ := syncEligible(parsed, src)
	var got []string
	literals := literalCalls(ast, tools)
	// Every member is called, by its parameter's name, and the
	// function has the parameters.
	called := map[string]bool{}
	walkCalls(reflect.ValueOf(rootFunction(ast).Body), func(c *jsast.CallExpression) {
		if id, ok := c.Callee.(*jsast.Identifier); ok && strings.Contains(id.Name.String(), literalMemberMark) {
			called[id.Name.String()] = true
		}
	})
	params := rootFunction(ast).ParameterList.List
	if len(called) != len(literals) || len(params) != len(literals) {
		t.Errorf("%s: %d members, %d called, %d parameters", code, len(literals), len(called), len(params))
	}
	for i, l := range literals {
		if !called[l.member] || params[i].Target.(*jsast.Identifier).Name.String() != l.member {
			t.Errorf("%s: member %q not called or not parameter %d", code, l.member, i)
		}
	}
	for _, l := range literals {
		if l.member != l.tool+literalMemberMark+strings.Join(l.keys, literalMemberMark) {
			t.Errorf("%s: member %q for %s %q", code, l.member, l.tool, l.keys)
		}
		got = append(got, l.tool+" "+strings.Join(l.keys, ","))
	}
	return got
}

// Only a literal whose keys the source alone gives is taken: each other
// form of member, key or call keeps the arguments listed at run time.
func TestLiteralCalls(t *testing.T) {
	for _, c := range []struct {
		code string
		want []string
	}{
		{`await tools.get_order({id: 1})`, []string{"get_order id"}},
		{`const id = 1; await tools.get_order({id})`, []string{"get_order id"}},
		{`await tools.get_order({})`, []string{"get_order "}},
		{`await tools.get_order({"a b": 1, c: 2, 'd': 3})`, []string{"get_order a b,c,d"}},
		{`await tools.get_order({id: 1}); await tools.get_order({id: 2}); await tools.note({id: 3})`, []string{"get_order id", "note id"}},
		{`await tools.get_order({id: 1, x: (await tools.get_order({y: 2})).id})`, []string{"get_order y", "get_order id,x"}},
		{`await tools.get_order({toJSON: 1})`, []string{"get_order toJSON"}},
		{`await tools.get_order({"01": 1, "-1": 2, "4294967295": 3})`, []string{"get_order 01,-1,4294967295"}},
		// Not taken:
		{`await tools.get_order({id: 1}, 2)`, nil},
		{`await tools.get_order()`, nil},
		{`const o = {id: 1}; await tools.get_order(o)`, nil},
		{`await tools.missing({id: 1})`, nil},
		{`const o = {}; await tools.get_order({...o})`, nil},
		{`const k = "id"; await tools.get_order({[k]: 1})`, nil},
		{`await tools.get_order({get id() { return 1 }})`, nil},
		{`await tools.get_order({set id(v) {}})`, nil},
		{`await tools.get_order({id() {}})`, nil},
		{`await tools.get_order({__proto__: null, id: 1})`, nil},
		{`await tools.get_order({"__proto__": {}, id: 1})`, nil},
		{`await tools.get_order({0: 1})`, nil},
		{`await tools.get_order({"1": 1})`, nil},
		{`await tools.get_order({4294967294: 1})`, nil},
		{`await tools.get_order({1.5: 1})`, nil},
		{`await tools.get_order({id: 1, id: 2})`, nil},
		{`await tools.get_order({"a\u0000b": 1})`, nil},
		{`await tools.get_order({"\ud800": 1})`, nil},
		{`await tools.get_order([1])`, nil},
	} {
		if got := literalsOf(t, c.code, "get_order", "note"); !slices.Equal(got, c.want) {
			t.Errorf("%s: %q, want %q", c.code, got, c.want)
		}
	}
}

// A program with more literals of different keys than maxLiteralCalls
// gets that many parameters; the rest of its calls list their keys.
func TestLiteralCallsBounded(t *testing.T) {
	var b strings.Builder
	for i := range maxLiteralCalls + 10 {
		fmt.Fprintf(&b, "await tools.get_order({id: %d, k%d: 1})\n", i, i)
	}
	b.WriteString("await tools.get_order({id: 1, k0: 2})\nreturn 1")
	if got := literalsOf(t, b.String(), "get_order"); len(got) != maxLiteralCalls {
		t.Fatalf("%d parameters, want %d", len(got), maxLiteralCalls)
	}
	o := &orders{}
	out, err := runProgram(program(b.String(), "get_order"), o.call)
	if err != nil || string(out) != `{"result":1}` || len(o.calls) != maxLiteralCalls+11 || o.calls[maxLiteralCalls+5] != `get_order {"id":261,"k261":1}` {
		t.Fatalf("out %s err %v, %d calls", out, err, len(o.calls))
	}
}

// literalCorpus are eligible programs calling tools with object literals,
// with whatever could make stringify see another object than the literal
// wrote: a toJSON on Object.prototype (a function, a getter that changes
// the object or keeps it), setters on Object.prototype, members whose
// values have no JSON, keys that need escaping.
var literalCorpus = []string{
	`await tools.get_order({id: 1, a: "x", b: true, c: null, d: 1.5, e: -0, f: 1e21, g: NaN, h: [1, {i: 2}], j: {k: {l: "m"}}})`,
	`await tools.get_order({id: 1, u: undefined, f: function () {}, s: Symbol("x"), g: () => 1, n: null})`,
	`await tools.get_order({u: undefined})`,
	`await tools.get_order({})`,
	`await tools.get_order({"a\"b": 1, "c\\d": 2, "e\nf": 3, "ü": 4, "\u2028": 5, "\x01": 6, "😀": 7})`,
	`await tools.get_order({id: "\ud800"})`,
	`await tools.get_order({toJSON: () => ({id: 9}), x: 1})`,
	`await tools.get_order({toJSON: 5, x: 1})`,
	`Object.prototype.toJSON = function (k) { return typeof this.id === "number" ? {id: 7, key: k, own: Object.keys(this).join()} : this.id }; await tools.get_order({id: 1, x: 2})`,
	`Object.prototype.toJSON = 5; await tools.get_order({id: 1})`,
	`Object.prototype.toJSON = undefined; await tools.get_order({id: 1})`,
	`Object.defineProperty(Object.prototype, "toJSON", {get() { this.added = 1; delete this.id; return undefined }, configurable: true})
await tools.get_order({id: 1, x: 2})`,
	`let kept; Object.defineProperty(Object.prototype, "toJSON", {get() { kept = this; return undefined }, configurable: true})
await tools.get_order({id: 1, v: {w: 1}}); return Object.keys(kept)`,
	`Object.defineProperty(Object.prototype, "id", {set(v) { throw new Error("setter ran") }, get() { return 42 }})
await tools.get_order({id: 1}); return (await tools.get_order({x: 1})).id`,
	`const v = {toJSON(k) { return "key " + k }}; await tools.get_order({id: 1, v, w: [v]})`,
	`await tools.get_order({id: 1n})`,
	`const c = {}; c.c = c; await tools.get_order({id: 1, c})`,
	`const log = []; const v = {get a() { log.push("a"); return 1 }, get b() { log.push("b"); return 2 }}
await tools.get_order({id: 1, v}); return log`,
	`let n = 0; const f = () => ++n; await tools.get_order({id: f(), x: f(), y: f()}); return n`,
	`try { await tools.get_order({id: 1, x: null.boom}) } catch (e) { return String(e) }`,
	`await tools.get_order({id: new Number(3), s: new String("s"), b: new Boolean(false)})`,
	`const id = 4; return (await tools.get_order({id})).refund`,
	`await tools.get_order({id: 1}); return [typeof get_order_id, typeof get_orderid, this["get_order_id"]]`,
	`"use strict"; const id = 5; return (await tools.get_order({id})).refund`,
	`for (let id = 0; id < 3; id++) await tools.get_order({id}); return 1`,
	`try { await tools.refund({id: 1}) } catch (e) { return [e.name, e.tool, e.message] }`,
	"await tools.note({})\nawait tools.refund({id: 2})",
	// Literals the source cannot speak for, beside one it can: each
	// would send other arguments if its keys were taken from the source.
	`await tools.note({x: 1}); await tools.get_order({b: 1, "2": 3, a: 4, "0": 5})`,
	`await tools.note({x: 1}); await tools.get_order({__proto__: {x: 1}, id: 1})`,
	`await tools.note({x: 1}); await tools.get_order({id: 1, id: 2, x: 3})`,
	`await tools.note({x: 1}); await tools.get_order({"\ud800": 1, id: 2})`,
	`await tools.note({x: 1}); await tools.get_order({get id() { return 5 }, x: 1})`,
	`await tools.note({x: 1}); const k = "y"; await tools.get_order({[k]: 1, x: 2})`,
	`await tools.note({x: 1}); const o = {y: 2}; await tools.get_order({...o, x: 1})`,
}

// A call with an object literal sends what JSON.stringify makes of the
// literal, and runs the program's code the same: compared with the
// program run with its awaits, which encodes every argument by listing
// its keys at run time.
func TestLiteralArgsAreStringify(t *testing.T) {
	tools := []string{"get_order", "note", "refund"}
	for _, code := range literalCorpus {
		if ok, why := eligible(t, code); !ok {
			t.Errorf("%s: not eligible (%s); the corpus is of eligible programs", code, why)
			continue
		}
		if literalsOf(t, code, tools...) == nil {
			t.Errorf("%s: no call takes its keys from the source", code)
		}
		run := func(allowSync bool) string {
			o, b := syncBridge()
			out, err := runProgramAs(program(code, tools...), b, allowSync)
			return fmt.Sprintf("out %s\nerr %v\ncalls %q", out, err, o.calls)
		}
		sync, async := run(true), run(false)
		if sync != async {
			t.Errorf("%s:\nkeys from the source:\n%s\nlisted:\n%s", code, sync, async)
		}
	}
}

// The hidden parameters do not show: tools lists the tools it was
// given, a ToolError names the tool, and no name a program can write,
// even built at run time, reaches a parameter.
func TestLiteralParametersHidden(t *testing.T) {
	code := `await tools.get_order({id: 1})
const names = Object["getOwnProperty" + "Names"]
const ev = this["ev" + "al"]
try { await tools.refund({id: 2}) } catch (e) {
  return [names(this.tools), JSON.stringify(this.tools), e.tool, e.message, typeof get_order, typeof get_order_id, ev("typeof arguments")]
}`
	if got := literalsOf(t, code, "get_order", "refund"); len(got) != 2 {
		t.Fatalf("literal calls %q", got)
	}
	out, err := runProgram(program(code, "get_order", "refund"), (&orders{}).call)
	want := `{"result":[["get_order","refund"],"{}","refund","tools.refund: Denied: refunds need a person","undefined","undefined","undefined"]}`
	if err != nil || string(out) != want {
		t.Fatalf("out %s err %v, want %s", out, err, want)
	}
}
