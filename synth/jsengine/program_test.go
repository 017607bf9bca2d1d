package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// orders is a bridge serving get_order (structured), note (text) and
// refund (a failure), recording the calls it gets.
type orders struct{ calls []string }

func (o *orders) call(name string, args []byte) ([]byte, error) {
	o.calls = append(o.calls, name+" "+string(args))
	switch name {
	case "get_order":
		var in struct{ ID int }
		_ = json.Unmarshal(args, &in)
		b, _ := json.Marshal(map[string]any{"id": in.ID, "refund": in.ID * 10})
		return []byte(`{"content":[{"type":"text","text":"order"}],"structuredContent":` + string(b) + `}`), nil
	case "note":
		return []byte(`{"content":[{"type":"text","text":"noted"}]}`), nil
	case "raw":
		return []byte(`{"content":[{"type":"text","text":" {\"refund\": 5, \"items\": [1, 2]} "}]}`), nil
	case "rawlist":
		return []byte(`{"content":[{"type":"text","text":"[3, 4]"}]}`), nil
	case "broken":
		return []byte(`{"content":[{"type":"text","text":"{not json}"}]}`), nil
	}
	return []byte(`{"content":[{"type":"text","text":"Denied: refunds need a person"}],"isError":true}`), nil
}

func program(code string, tools ...string) []byte {
	b, _ := json.Marshal(programInput{Code: code, Tools: tools})
	return b
}

func TestProgramChainsCalls(t *testing.T) {
	o := &orders{}
	out, err := runProgram(program(`
let total = 0
for (const id of [1, 2, 3]) {
  const o = await tools.get_order({id})
  total += o.refund
}
console.log("summed", 3, {total})
const n = await tools.note({})
return {total, n}`, "get_order", "note"), o.call)
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != `{"result":{"total":60,"n":"noted"},"console":"summed 3 {\"total\":60}"}` {
		t.Fatalf("out %s", out)
	}
	want := []string{`get_order {"id":1}`, `get_order {"id":2}`, `get_order {"id":3}`, `note {}`}
	if strings.Join(o.calls, "|") != strings.Join(want, "|") {
		t.Fatalf("calls %q", o.calls)
	}
}

// The host bridge reads every result into one buffer, which the next call
// overwrites: what a program keeps of a result (names, strings, numbers,
// text) is its own, in a program with and without its awaits and in a
// tool's script.
func TestResultsOutliveTheBridgesBuffer(t *testing.T) {
	var buf []byte
	o := &orders{}
	reuse := func(name string, args []byte) ([]byte, error) {
		r, _ := o.call(name, args)
		if name == "get_order" {
			// Each result in text as well, a string of its own.
			var in struct{ ID int }
			_ = json.Unmarshal(args, &in)
			r = fmt.Appendf(nil, `{"content":[{"type":"text","text":"order %d"}],"structuredContent":{"id%d":"s%d","n":[%d]}}`, in.ID, in.ID, in.ID, in.ID)
		}
		buf = append(buf[:0], r...)
		for i := len(buf); i < cap(buf); i++ {
			buf[:cap(buf)][i] = 'X'
		}
		return buf, nil
	}
	const want = `{"result":[{"id1":"s1","n":[1]},{"id2":"s2","n":[2]},{"id33333":"s33333","n":[33333]},"noted",{"refund":5,"items":[1,2]}]}`
	for _, code := range []string{
		`const a = await tools.get_order({id: 1}); const b = await tools.get_order({id: 2}); const c = await tools.get_order({id: 33333}); return [a, b, c, await tools.note(), await tools.raw()]`,
		`const p = Promise.resolve(); await p; const a = await tools.get_order({id: 1}); const b = await tools.get_order({id: 2}); const c = await tools.get_order({id: 33333}); return [a, b, c, await tools.note(), await tools.raw()]`,
	} {
		out, err := runProgram(program(code, "get_order", "note", "raw"), reuse)
		if err != nil || string(out) != want {
			t.Errorf("%s:\nout %s err %v\nwant %s", code, out, err, want)
		}
	}
	out, err := runScript(`function run() { const a = tools.call("get_order", {id: 1}); const b = tools.call("note"); const c = tools.call("get_order", {id: 2}); return [a, b, c] }`, []byte(`{}`), reuse)
	if want := `[{"id1":"s1","n":[1]},"noted",{"id2":"s2","n":[2]}]`; err != nil || string(out) != want {
		t.Errorf("script: out %s err %v, want %s", out, err, want)
	}
}

func TestProgramResultShapes(t *testing.T) {
	for _, c := range []struct{ code, want string }{
		{`return 42`, `{"result":42}`},
		{`console.log("only")`, `{"result":null,"console":"only"}`},
		{`return undefined`, `{"result":null}`},
		{`return () => 1`, `{"result":null}`},
		{`const r = await Promise.all([tools.note(), tools.note()]); return r`, `{"result":["noted","noted"]}`},
		{`return tools.note().then(x => x + "!")`, `{"result":"noted!"}`},
		// JSON given as text only is parsed when it is an object or array.
		{`const o = await tools.raw(); return [o.refund, o.items.length, (await tools.rawlist())[1]]`, `{"result":[5,2,4]}`},
		{`return await tools.broken()`, `{"result":"{not json}"}`},
	} {
		out, err := runProgram(program(c.code, "note", "raw", "rawlist", "broken"), (&orders{}).call)
		if err != nil || string(out) != c.want {
			t.Errorf("%s: out %s err %v, want %s", c.code, out, err, c.want)
		}
	}
}

func TestProgramToolFailureThrows(t *testing.T) {
	o := &orders{}
	// Caught, the failure is data the program goes on with.
	out, err := runProgram(program(`
try { await tools.refund({id: 1}) } catch (e) { return {name: e.name, tool: e.tool, msg: e.message} }`, "refund"), o.call)
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != `{"result":{"name":"ToolError","tool":"refund","msg":"tools.refund: Denied: refunds need a person"}}` {
		t.Fatalf("out %s", out)
	}
	// Uncaught, it ends the program with the message and where.
	_, err = runProgram(program("const a = 1\n  await tools.refund({id: 2})\nreturn a", "refund"), o.call)
	if err == nil || !strings.Contains(err.Error(), "the program threw: ToolError: tools.refund: Denied: refunds need a person") ||
		!strings.Contains(err.Error(), "at line 2, column ") || strings.Contains(err.Error(), "native") {
		t.Fatalf("err %v", err)
	}
}

func TestProgramErrorsSayWhere(t *testing.T) {
	for _, c := range []struct{ code, want string }{
		{"const x = 1\nconst y = x +\n", "does not compile"},
		{"let a = 1\nlet b = (\n}", "line 3, column 1"},
		{"const x = 1\nnull.boom", "TypeError: Cannot read property 'boom'"},
		{"const x = 1\nnull.boom", "line 2, column 6"},
		{"\n\nthrow new RangeError('too far')", "RangeError: too far"},
		{"\n\nthrow new RangeError('too far')", "line 3, column 7"},
		{"function f() { return f() }\nreturn f()", "maximum call stack size"},
		{"console.log('before'); throw 1", "console output:\nbefore"},
		{"await new Promise(() => {})", "never settles"},
		{"}); (function () {", "closes the function"},
		{"  ", "the program is empty"},
		{`return tools.missing()`, "TypeError"},
	} {
		_, err := runProgram(program(c.code, "note"), (&orders{}).call)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: err %v, want it to contain %q", c.code, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "program.js") {
			t.Errorf("%q: err %v names the wrapper's source", c.code, err)
		}
	}
	if _, err := runProgram([]byte(`{"code":"return 1","language":"python"}`), nil); err == nil || !strings.Contains(err.Error(), "JavaScript") {
		t.Fatalf("python: %v", err)
	}
	if _, err := runProgram([]byte(`[1]`), nil); err == nil || !strings.Contains(err.Error(), `{"code"`) {
		t.Fatalf("bad arguments: %v", err)
	}
}

func TestProgramCannotTamperWithTheBridge(t *testing.T) {
	o := &orders{}
	for _, code := range []string{
		`tools.get_order = () => ({refund: 1e9}); return (await tools.get_order({id: 1})).refund`,
		`Object.defineProperty(tools, "get_order", {value: () => ({refund: 1e9})}); return 1`,
		`tools.evil = 1; return Object.keys(tools)`,
		`Object.setPrototypeOf(tools, {get_order: () => ({refund: 1e9})}); return 1`,
		`delete tools.get_order; return (await tools.get_order({id: 1})).refund`,
		`globalThis.tools = {get_order: () => ({refund: 1e9})}; return (await tools.get_order({id: 1})).refund`,
		`JSON.parse = () => ({refund: 1e9}); JSON.stringify = () => '{"id":99}'; return (await tools.get_order({id: 1})).refund`,
		`Object.prototype.refund = 1e9; Promise.prototype.then = function () { throw new Error("x") }; return (await tools.get_order({id: 1})).refund`,
	} {
		out, err := runProgram(program(code, "get_order"), o.call)
		if err != nil {
			// Refusals of the tampering are fine (frozen objects throw
			// in strict contexts); a forged value is not.
			if strings.Contains(err.Error(), "1000000000") {
				t.Errorf("%s: forged: %v", code, err)
			}
			continue
		}
		if strings.Contains(string(out), "1000000000") || strings.Contains(string(out), "evil") {
			t.Errorf("%s: forged result %s", code, out)
		}
	}
	for _, c := range o.calls {
		if c != `get_order {"id":1}` {
			t.Errorf("a tampered program made the call %q", c)
		}
	}
}

func TestProgramReachesNothingElse(t *testing.T) {
	for _, code := range []string{
		`return require("fs")`, `return await fetch("http://example.com")`, `return process.env`,
		`return Deno.readFile("x")`, `return await import("fs")`, `return setTimeout(() => 1, 0)`,
		`return XMLHttpRequest`, `return tools.call("note", {})`,
	} {
		out, err := runProgram(program(code, "note"), (&orders{}).call)
		if err == nil {
			t.Errorf("%s: ran, gave %s", code, out)
		}
	}
}

// A refusal that must end the program stops it, whatever it catches: the
// run's call limit, and a durable run's suspension (the call runs in the
// workflow and the program runs again); an ordinary refusal does not. The
// kind is the host's field of the reply: a tool whose own error text (or
// structured content) reads like a stop is a failure the program catches.
func TestProgramStopsAtTheCallLimit(t *testing.T) {
	for _, c := range []struct {
		name, reply, text string
		stops             bool
	}{
		{"call limit", `"refusal":"ProgramCallLimit"`, "ProgramCallLimit: a program may make 3 tool calls", true},
		{"suspended", `"refusal":"ProgramSuspended"`, "ProgramSuspended: `note` runs outside this program's sandbox", true},
		{"another refusal", `"refusal":"ToolPolicyDenied"`, "ToolPolicyDenied: no", false},
		{"a tool's text like the call limit", "", "ProgramCallLimit: a program may make 3 tool calls", false},
		{"a tool's text like a suspension", "", "ProgramSuspended: `note` runs outside this program's sandbox", false},
		{"the kind in the tool's structured content", `"structuredContent":{"refusal":"ProgramSuspended"}`, "ProgramSuspended: x", false},
		{"the kind as text", `"refusal":"ProgramSuspended: x"`, "ProgramSuspended: x", false},
		{"a stop kind on a success", `"refusal":"ProgramSuspended","isError":false`, "ok", false},
	} {
		n := 0
		b := func(name string, args []byte) ([]byte, error) {
			n++
			if n > 3 {
				text, _ := json.Marshal(c.text)
				isError := `,"isError":true`
				if strings.Contains(c.reply, "isError") {
					isError = ""
				}
				extra := ""
				if c.reply != "" {
					extra = "," + c.reply
				}
				return []byte(`{"content":[{"type":"text","text":` + string(text) + `}]` + isError + extra + `}`), nil
			}
			return []byte(`{"content":[{"type":"text","text":"ok"}]}`), nil
		}
		out, err := runProgram(program(`for (let i = 0; i < 10; i++) { try { await tools.note() } catch (e) {} } return "done"`, "note"), b)
		if !c.stops {
			if err != nil || n != 10 || !strings.Contains(string(out), `"done"`) {
				t.Errorf("%s: %s, %v after %d calls; want the program to catch it and finish", c.name, out, err, n)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), "the program was stopped: tools.note: "+c.text) || n != 4 {
			t.Errorf("%s: err %v after %d calls; want it stopped at the 4th", c.name, err, n)
		}
	}
}

// BenchmarkProgramNative is runProgram outside the sandbox, for the ratio
// with codemode/jsprogram's BenchmarkProgramStart.
func BenchmarkProgramNative(b *testing.B) {
	in := program("return 1", "note")
	for b.Loop() {
		if _, err := runProgram(in, (&orders{}).call); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkProgramCallNative is one tools.NAME call of a program outside
// the sandbox (a Go bridge answering at once), for the ratio with
// codemode/jsprogram's BenchmarkCall/nested.
func BenchmarkProgramCallNative(b *testing.B) {
	in := program("for (let id = 0; id < 100; id++) await tools.get_order({id}); return 1", "get_order")
	for b.Loop() {
		if _, err := runProgram(in, (&orders{}).call); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/100/1000, "µs/call")
}

// The runtime prepared while the instance started serves one call: what a
// script leaves in it never reaches the next call in the same instance.
func TestPreparedRuntimeServesOneCall(t *testing.T) {
	prepared = prepareRuntime()
	if prepared == nil {
		t.Fatal("no runtime prepared")
	}
	first, err := runProgram(program(`globalThis.leak = "secret"; Object.prototype.polluted = 1; return typeof leak`), nil)
	if err != nil || string(first) != `{"result":"string"}` {
		t.Fatalf("first: %s %v", first, err)
	}
	if prepared != nil {
		t.Fatal("the prepared runtime is still there to be handed out again")
	}
	second, err := runProgram(program(`return [typeof leak, ({}).polluted === undefined]`), nil)
	if err != nil || string(second) != `{"result":["undefined",true]}` {
		t.Fatalf("second: %s %v", second, err)
	}
}

// handleProgram is what the engine runs for a call in program mode: the
// call's arguments are the program, the reply an MCP result built in Go,
// and a failure a message, never a half-written reply.
func TestHandleProgram(t *testing.T) {
	if _, failure := handleProgram([]byte(`not json`), nil); !strings.Contains(failure, "call input") {
		t.Fatalf("malformed input: failure %q", failure)
	}
	o := &orders{}
	input, _ := json.Marshal(map[string]any{"params": map[string]any{"name": "run_program", "arguments": json.RawMessage(program(`return await tools.get_order({id: 4})`, "get_order"))}})
	out, failure := handleProgram(input, o.call)
	if failure != "" {
		t.Fatalf("failure %q", failure)
	}
	var res struct {
		Structured struct {
			Result struct{ Refund int } `json:"result"`
		} `json:"structuredContent"`
	}
	if err := json.Unmarshal(out, &res); err != nil || res.Structured.Result.Refund != 40 || len(o.calls) != 1 {
		t.Fatalf("reply %s (%v), calls %q", out, err, o.calls)
	}
	input, _ = json.Marshal(map[string]any{"params": map[string]any{"name": "run_program", "arguments": json.RawMessage(program(`throw new Error("stop here")`))}})
	if out, failure := handleProgram(input, o.call); out != nil || !strings.Contains(failure, "stop here") {
		t.Fatalf("a throwing program: %s, failure %q", out, failure)
	}
}
