package main

import (
	"encoding/json"
	"strings"
	"testing"
)

func mustRun(t *testing.T, script, args string) string {
	t.Helper()
	out, err := runScript(script, []byte(args), nil)
	if err != nil {
		t.Fatalf("runScript: %v", err)
	}
	return string(out)
}

func runErr(t *testing.T, script, args string) string {
	t.Helper()
	out, err := runScript(script, []byte(args), nil)
	if err == nil {
		t.Fatalf("runScript succeeded with %s, want an error", out)
	}
	if _, ok := err.(*scriptError); !ok {
		t.Fatalf("error %T %v, want *scriptError", err, err)
	}
	return err.Error()
}

func TestRunReturnsJSON(t *testing.T) {
	cases := []struct{ name, script, args, want string }{
		{"object", `function run(a) { return {n: a.text.split(/\s+/).length} }`, `{"text":"a b c"}`, `{"n":3}`},
		{"array", `function run(a) { return a.xs.map(x => x * 2) }`, `{"xs":[1,2,3]}`, `[2,4,6]`},
		{"string", `function run() { return "héllo" }`, `{}`, `"héllo"`},
		{"null", `function run() { return null }`, `{}`, `null`},
		{"bool", `function run() { return false }`, `{}`, `false`},
		{"es2020", `function run(a) { return a.missing?.deep ?? 2n.toString() }`, `{}`, `"2"`},
		{"class and spread", `class P { constructor(x) { this.x = x } } function run(a) { return {...new P(a.v), y: [...'ab']} }`, `{"v":1}`, `{"x":1,"y":["a","b"]}`},
		{"async", `async function run(a) { const v = await Promise.resolve(a.v); return v + 1 }`, `{"v":41}`, `42`},
		{"arrow run", `const run = (a) => Object.keys(a).sort()`, `{"b":1,"a":2}`, `["a","b"]`},
		{"no arguments", `function run(a) { return typeof a }`, ``, `"object"`},
		{"date is JSON", `function run() { return new Date(0) }`, `{}`, `"1970-01-01T00:00:00.000Z"`},
		{"console does not leak", `function run() { console.log('{"content":[]}'); return 1 }`, `{}`, `1`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := mustRun(t, c.script, c.args); got != c.want {
				t.Fatalf("got %s, want %s", got, c.want)
			}
		})
	}
}

func TestRunErrorsAreClear(t *testing.T) {
	cases := []struct{ name, script, want string }{
		{"syntax", `function run( { return 1 }`, "the script does not compile"},
		{"no run", `function main() { return 1 }`, "must define a function run(args)"},
		{"throw", `function run() { throw new TypeError("bad input") }`, "run threw: TypeError: bad input"},
		{"throw at load", `throw new Error("boom"); function run() {}`, "the script failed while loading: Error: boom"},
		{"undefined", `function run() {}`, "run returned undefined"},
		{"function", `function run() { return () => 1 }`, "run returned a function"},
		{"cycle", `function run() { const a = {}; a.a = a; return a }`, "cannot encode"},
		{"bigint", `function run() { return 1n }`, "cannot encode"},
		{"rejected", `async function run() { throw new RangeError("nope") }`, "promise was rejected: RangeError: nope"},
		{"pending", `function run() { return new Promise(() => {}) }`, "never settles"},
		{"deep recursion", `function f(n) { return f(n + 1) + 1 } function run() { return f(0) }`, "maximum call stack size (10000) exceeded"},
		{"console tail", `function run() { console.log("step", {k: 1}); throw new Error("x") }`, "console output:\nstep {\"k\":1}"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := runErr(t, c.script, `{}`); !strings.Contains(got, c.want) {
				t.Fatalf("error %q does not contain %q", got, c.want)
			}
		})
	}
}

func TestStackOverflowCannotBeSwallowed(t *testing.T) {
	// A script that catches the overflow and recurses again would spin
	// until the time limit; the overflow ends the call instead.
	got := runErr(t, `function f() { return f() } function run() { for (;;) { try { f() } catch (e) {} } }`, `{}`)
	if !strings.Contains(got, "maximum call stack size") {
		t.Fatalf("error %q", got)
	}
}

func TestPollutionCannotForgeTheReply(t *testing.T) {
	script := `
		JSON.stringify = () => '{"content":[{"type":"text","text":"forged"}],"isError":false}';
		JSON.parse = () => ({ forged: true });
		Object.prototype.isError = true;
		Object.defineProperty(Object.prototype, "content", { get() { return "forged" } });
		Array.prototype.push = function () { throw new Error("poisoned") };
		globalThis.console = null;
		function run(args) { return { got: args.v } }`
	out, failure := handle([]byte(`{"params":{"name":"t","arguments":{"v":7}}}`), script, true, nil)
	if failure != "" {
		t.Fatalf("failure: %s", failure)
	}
	var res struct {
		Content           []struct{ Type, Text string }
		StructuredContent map[string]any
		IsError           bool
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("reply %s: %v", out, err)
	}
	if res.IsError || len(res.Content) != 1 || res.Content[0].Text != `{"got":7}` || res.StructuredContent["got"] != float64(7) {
		t.Fatalf("reply %s", out)
	}
	if string(out) != `{"content":[{"type":"text","text":"{\"got\":7}"}],"structuredContent":{"got":7}}` {
		t.Fatalf("reply %s", out)
	}
}

func TestHandle(t *testing.T) {
	if _, failure := handle([]byte(`{}`), "", false, nil); !strings.Contains(failure, "no script to run") {
		t.Fatalf("failure %q", failure)
	}
	if _, failure := handle([]byte(`not json`), "function run(){}", true, nil); !strings.Contains(failure, "call input") {
		t.Fatalf("failure %q", failure)
	}
	out, failure := handle([]byte(`{"params":{"name":"autoagent_check","arguments":{}}}`), "function run(){ throw 1 }", true, nil)
	if failure != "" || string(out) != `{"content":[{"type":"text","text":"\"ok\""}]}` {
		t.Fatalf("check: %s %q", out, failure)
	}
	if _, failure := handle([]byte(`{"params":{"name":"autoagent_check"}}`), "function nope(){}", true, nil); !strings.Contains(failure, "must define") {
		t.Fatalf("check failure %q", failure)
	}
	out, failure = handle([]byte(`{"params":{"name":"t","arguments":{"a":[1]}}}`), "function run(a){ return a.a }", true, nil)
	if failure != "" || string(out) != `{"content":[{"type":"text","text":"[1]"}]}` {
		t.Fatalf("array reply %s %q", out, failure)
	}
}

func TestToolsCall(t *testing.T) {
	if got := runErr(t, `function run() { return tools.call("weather", {city: "Oslo"}) }`, `{}`); !strings.Contains(got, "without the host-tool bridge") {
		t.Fatalf("error %q", got)
	}
	var seen string
	b := func(name string, args []byte) ([]byte, error) {
		seen = name + " " + string(args)
		if name == "broken" {
			return []byte(`{"content":[{"type":"text","text":"denied by policy"}],"isError":true}`), nil
		}
		return []byte(`{"content":[{"type":"text","text":"{}"}],"structuredContent":{"temp":21}}`), nil
	}
	out, err := runScript(`function run() { return tools.call("weather", {city: "Oslo"}).temp }`, nil, b)
	if err != nil || string(out) != "21" || seen != `weather {"city":"Oslo"}` {
		t.Fatalf("out %s err %v seen %q", out, err, seen)
	}
	_, err = runScript(`function run() { return tools.call("broken") }`, nil, b)
	if err == nil || !strings.Contains(err.Error(), "denied by policy") {
		t.Fatalf("err %v", err)
	}
}
