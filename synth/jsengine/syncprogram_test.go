package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/dop251/goja"
	"github.com/dop251/goja/parser"
)

// eligible parses code as runProgram does and asks syncEligible.
func eligible(t *testing.T, code string) (bool, string) {
	t.Helper()
	src := programPrefix + code + programSuffix
	ast, err := goja.Parse(programName, src, parser.WithDisableSourceMaps)
	if err != nil {
		t.Fatalf("%q does not parse: %v", code, err)
	}
	p, why := syncEligible(ast, src)
	if (p == nil) == (why == "") {
		t.Fatalf("%q: tree %v with reason %q", code, p != nil, why)
	}
	return p != nil, why
}

// Each construct that could observe the job queue, reach code from text or
// alias tools keeps the program's awaits; why names it.
func TestSyncIneligible(t *testing.T) {
	for _, c := range []struct{ code, why string }{
		{`await null; return 1`, "awaits something other than a tool call"},
		{`const p = tools.note(); return await p`, "uses tools other than"},
		{`return await tools.note().x`, "awaits something other than a tool call"},
		{`return await tools.note()()`, "awaits something other than a tool call"},
		{`return await other.note()`, "awaits something other than a tool call"},
		{`return await (tools.note())`, "is not written `await tools.NAME(…)`"},
		{`return await /* c */ tools.note()`, "is not written `await tools.NAME(…)`"},
		{`return tools.note()`, "uses tools other than"},
		{`const t = tools; return await t.note()`, "uses tools other than"},
		{`return await tools["note"]()`, "awaits something other than a tool call"},
		{`const {note} = tools; return 1`, "uses tools other than"},
		{`const o = {tools}; return 1`, "uses tools other than"},
		{`function f(tools) { return tools } return 1`, "uses tools other than"},
		{`const tools = {note: () => 1}; return await tools.note()`, "uses tools other than"},
		{`return typeof tools`, "uses tools other than"},
		{`return 1`, "awaits nothing"},
		{`const e = new Error(await tools.note()); return e.stack`, "names stack"},
		{`try { await tools.refund() } catch (e) { return e["stack"] }`, "names stack"},
		{`await tools.note(); const e = new Error("x"); return Object.getOwnPropertyNames(e).map(k => e[k])`, "lists own properties"},
		{`await tools.note(); return Object.getOwnPropertyDescriptors(new Error("x"))`, "lists own properties"},
		{`await tools.note(); const e = new Error("x"); return Reflect.ownKeys(e).map(k => e[k])`, "lists own properties"},
		{`tools.get_order = 1; return await tools.get_order({id: 1})`, "uses tools other than"},
		{`return await Promise.resolve(1)`, "awaits something other than a tool call"},
		{`const P = Promise; return 1`, "names Promise"},
		{`return this.Promise`, "names Promise"},
		{`return this["Promise"]`, "names Promise"},
		{"return `${1}Promise`", "names Promise"},
		{`const x = await tools.note(); return x.then`, "names then"},
		{`Object.prototype.then = function (r) { r(1) }; return await tools.note()`, "names then"},
		{`return {then(r) { r(1) }}`, "names then"},
		{`return await tools.then()`, "names then"},
		{`async function f() { return 1 } return 1`, "async function of its own"},
		{`const f = async () => 1; return 1`, "async function of its own"},
		{`const o = {async m() {}}; return 1`, "async function of its own"},
		{`class C { async m() {} } return 1`, "async function of its own"},
		{`const g = async function* () {}; return 1`, "async function of its own"},
		{`with ({}) { await tools.note() } return 1`, "uses with"},
		{`return eval("1")`, "names eval"},
		{`return Function("return 1")()`, "names Function"},
		{`return (() => 1).constructor("return 1")()`, "names constructor"},
		{`return arguments.callee.toString()`, "names arguments"},
		{`return globalThis`, "names globalThis"},
	} {
		ok, why := eligible(t, c.code)
		if ok || !strings.Contains(why, c.why) {
			t.Errorf("%s: eligible %v (%q), want ineligible: %q", c.code, ok, why, c.why)
		}
	}
}

// syncCorpus are eligible programs: each runs the same without its awaits.
var syncCorpus = []string{
	`return (await tools.get_order({id: 1})).refund`,
	`let total = 0
for (const id of [1, 2, 3]) {
  const o = await tools.get_order({id})
  total += o.refund
}
console.log("summed", 3, {total})
const n = await tools.note({})
return {total, n}`,
	"const a = 1\n  await tools.refund({id: 2})\nreturn a",
	`try { await tools.refund({id: 1}) } catch (e) { return {name: e.name, tool: e.tool, msg: e.message} }`,
	`try { await tools.refund({id: 1}) } catch (e) { console.log(e instanceof Error, String(e)) } finally { console.log("finally") } return 2`,
	"x = 1\nawait tools.note()\nreturn x",
	"const o = await tools.raw(); return [o.refund, o.items.length, (await tools.rawlist())[1]]",
	`return await tools.broken()`,
	`return await tools.get_order(await tools.get_order({id: 2}))`,
	`const a = [await tools.get_order({id: 1}), await tools.get_order({id: 2})]; return a.map(o => o.refund)`,
	`return (await tools.get_order({id: 3})).refund > 20 ? await tools.note() : await tools.get_order({id: 4})`,
	`const r = []; for (let i = 0; i < 3; i++) { if (i === 1) continue; r.push((await tools.get_order({id: i})).id) } return r`,
	`function* g() { yield 1; yield 2 } let s = 0; for (const i of g()) s += (await tools.get_order({id: i})).refund; return s`,
	`class A { get x() { return 5 } } return new A().x + (await tools.get_order({id: 1})).refund`,
	`const f = (o) => o.refund * 2; return f(await tools.get_order({id: 5}))`,
	`label: for (;;) { await tools.note(); break label } return "out"`,
	`switch ((await tools.get_order({id: 1})).id) { case 1: return "one"; default: return "other" }`,
	`console.log("before"); await tools.refund({}); return 1`,
	"await tools.note()\n\nthrow new RangeError('too far')",
	`await tools.note(); throw 1`,
	`await tools.note(); throw {a: 1}`,
	`await tools.note(); null.boom`,
	`null.boom; await tools.note()`,
	"const x = await tools.note()\nnull.boom",
	"function f() { return f() }\nawait tools.note(); return f()",
	`await tools.get_order({id: 1}); return undefined`,
	`await tools.get_order({id: 1}); return () => 1`,
	`await tools.get_order({id: 1}); return 10n`,
	`const o = {}; o.o = o; await tools.get_order(o)`,
	`await tools.get_order({id: 1n})`,
	`await tools.get_order({toJSON() { return {id: 9} }})`,
	`await tools.get_order("a string")`,
	`await tools.get_order()`,
	`await tools.get_order(null)`,
	`return await tools.missing()`,
	`return [typeof this, new.target === undefined, await tools.note()]`,
	`Object.prototype.refund = 1e9; return (await tools.get_order({id: 1})).refund`,
	`let r = await tools.get_order({id: 1}); r.more = await tools.get_order({id: 2}); return r`,
	`const seen = []; for (let i = 0; i < 20; i++) { try { seen.push((await tools.limited({i})).i) } catch (e) { seen.push(e.message) } } return seen`,
	`const e = new Error(await tools.note()); return [String(e), e.message]`,
	`for (let i = 0; i < 3; i++) { await tools.note() } console.log(await tools.note()); return`,
}

// syncBridge serves the corpus's tools: orders' and limited, which ends
// the program with the run's call limit at its fourth call.
func syncBridge() (*orders, bridge) {
	o := &orders{}
	n := 0
	return o, func(name string, args []byte) ([]byte, error) {
		if name == "limited" {
			o.calls = append(o.calls, name+" "+string(args))
			if n++; n > 3 {
				return []byte(`{"content":[{"type":"text","text":"ProgramCallLimit: a program may make 3 tool calls"}],"isError":true}`), nil
			}
			return []byte(`{"content":[{"type":"text","text":"{\"i\":1}"}]}`), nil
		}
		return o.call(name, args)
	}
}

// Each eligible program gives, run without its awaits, what it gives with
// them: the same result, console output, error (with its line and
// column) and calls, in the same order.
func TestSyncSameAsAsync(t *testing.T) {
	tools := []string{"get_order", "note", "refund", "raw", "rawlist", "broken", "limited"}
	for _, code := range syncCorpus {
		if ok, why := eligible(t, code); !ok {
			t.Errorf("%s: not eligible (%s); the corpus is of eligible programs", code, why)
			continue
		}
		run := func(allowSync bool) string {
			o, b := syncBridge()
			out, err := runProgramAs(program(code, tools...), b, allowSync)
			return fmt.Sprintf("out %s\nerr %v\ncalls %q", out, err, o.calls)
		}
		sync, async := run(true), run(false)
		if sync != async {
			t.Errorf("%s:\nwithout awaits:\n%s\nwith them:\n%s", code, sync, async)
		}
	}
}

// The rewrite keeps every position: an error's line and column are the
// program's, with and without the awaits.
func TestSyncKeepsPositions(t *testing.T) {
	code := "const a = 1\n    await tools.refund({id: 2})\nreturn a"
	if ok, why := eligible(t, code); !ok {
		t.Fatal(why)
	}
	_, err := runProgram(program(code, "refund"), (&orders{}).call)
	if err == nil || !strings.Contains(err.Error(), "the program threw: ToolError: tools.refund: Denied: refunds need a person\n\tat line 2, column 23") {
		t.Fatalf("err %v", err)
	}
	code = "let s = 0\ns += (await tools.get_order({id: 1})).refund\nnull.boom"
	if ok, why := eligible(t, code); !ok {
		t.Fatal(why)
	}
	_, err = runProgram(program(code, "get_order"), (&orders{}).call)
	if err == nil || !strings.Contains(err.Error(), "line 3, column 6") {
		t.Fatalf("err %v", err)
	}
}

// A program that would not run the same without its awaits keeps them:
// its behaviour shows the job queue's order, which a run without awaits
// would change.
func TestSyncIneligibleKeepsOrder(t *testing.T) {
	code := `const log = []
Promise.resolve().then(() => log.push("job"))
log.push((await tools.get_order({id: 1})).id)
log.push("after")
return log`
	if ok, _ := eligible(t, code); ok {
		t.Fatal("a program using Promise is eligible")
	}
	out, err := runProgram(program(code, "get_order"), (&orders{}).call)
	if err != nil || string(out) != `{"result":["job",1,"after"]}` {
		t.Fatalf("out %s err %v", out, err)
	}
}

// The check that the rewrite changed nothing else catches a program the
// walk would accept but whose meaning the blanking changes.
func TestSyncTreeCheck(t *testing.T) {
	src := programPrefix + "return 1" + programSuffix
	a, err := goja.Parse(programName, src, parser.WithDisableSourceMaps)
	if err != nil {
		t.Fatal(err)
	}
	b, err := goja.Parse(programName, syncPrefix+"return 2"+programSuffix, parser.WithDisableSourceMaps)
	if err != nil {
		t.Fatal(err)
	}
	if sameTree(a, b) {
		t.Fatal("return 1 and return 2 are the same tree")
	}
	c, err := goja.Parse(programName, syncPrefix+"return 1"+programSuffix, parser.WithDisableSourceMaps)
	if err != nil {
		t.Fatal(err)
	}
	if !sameTree(a, c) {
		t.Fatal("the blanked program differs from itself")
	}
}

func TestSyncResultIsJSON(t *testing.T) {
	out, err := runProgram(program(`return await tools.get_order({id: 4})`, "get_order"), (&orders{}).call)
	var v struct{ Result struct{ ID, Refund int } }
	if err != nil || json.Unmarshal(out, &v) != nil || v.Result.Refund != 40 {
		t.Fatalf("out %s err %v", out, err)
	}
}
