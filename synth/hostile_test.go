package synth

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/autoagent-go/autoagent/host"
	"github.com/autoagent-go/autoagent/providers/scripted"
	"github.com/autoagent-go/autoagent/tool"
)

// TestHostileScripts runs the hostile corpus through the JavaScript
// back-end: each script ends with an error result that says what happened,
// and the host keeps serving a well-behaved tool afterwards.
func TestHostileScripts(t *testing.T) {
	cases := []struct {
		name, source string
		want         []string // substrings of the error result
	}{
		{"infinite loop", `function run() { for (;;) {} }`, []string{"tool exceeded its time limit of " + hostileTimeout.String() + ""}},
		{"memory bomb", `function run() { const a = []; for (;;) a.push(new ArrayBuffer(8 << 20)) }`, []string{"tool exceeded its memory limit of 64 MiB"}},
		{"huge output", `function run() { return "x".repeat(1 << 20) }`, []string{"tool exceeded its output limit of 64 KiB"}},
		{"deep recursion", `function f(n) { return f(n + 1) + 1 } function run() { return f(0) }`, []string{"RangeError: maximum call stack size (10000) exceeded"}},
		{"require fs", `function run() { return require("fs").readFileSync("/etc/passwd", "utf8") }`, []string{"ReferenceError: require is not defined"}},
		{"environment", `function run() { return process.env.HOME }`, []string{"ReferenceError: process is not defined"}},
		{"network fetch", `async function run() { return (await fetch("http://127.0.0.1:1/")).status }`, []string{"ReferenceError: fetch is not defined"}},
		{"network xhr", `function run() { return new XMLHttpRequest() }`, []string{"ReferenceError: XMLHttpRequest is not defined"}},
		{"eval a host escape", `function run() { return eval("Deno.readTextFileSync('/etc/passwd')") }`, []string{"ReferenceError: Deno is not defined"}},
		{"timers", `function run() { return new Promise(r => setTimeout(r, 1)) }`, []string{"ReferenceError: setTimeout is not defined"}},
	}
	good := draft{Name: "good", Source: `function run(a) { return { ok: a.n * 2 } }`}
	ctx := context.Background()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := scripted.New(turn(draft{Name: "hostile", Source: c.source}), turn(good))
			b := newBuilder(t, w, func(o *Options) {
				o.Limits = host.Limits{Timeout: hostileTimeout, Output: 64 << 10}
				o.NoStaging = true
			})
			bad, err := b.Build(ctx, Request{Capability: c.name})
			if err != nil {
				t.Fatalf("Build: %v", err)
			}
			defer bad.Close(ctx)
			res, err := bad.Call(ctx, tool.Call{Name: "hostile", Arguments: json.RawMessage(`{}`)})
			if err != nil {
				t.Fatalf("Call returned a Go error: %v", err)
			}
			if !res.IsError {
				t.Fatalf("hostile script succeeded: %s", clip(res.Text(), 200))
			}
			for _, w := range c.want {
				if !strings.Contains(res.Text(), w) {
					t.Fatalf("error %q lacks %q", clip(res.Text(), 500), w)
				}
			}
			ok, err := b.Build(ctx, Request{Capability: "double"})
			if err != nil {
				t.Fatalf("the host stopped serving: %v", err)
			}
			defer ok.Close(ctx)
			res, err = ok.Call(ctx, tool.Call{Name: "good", Arguments: json.RawMessage(`{"n":21}`)})
			if err != nil || res.IsError || res.Text() != `{"ok":42}` {
				t.Fatalf("the host stopped serving: %s %v", res.Text(), err)
			}
		})
	}
}

// TestModuleSyntaxIsRefusedAtBuild: import and export (static or
// dynamic) are not available; the script is refused before it runs.
func TestModuleSyntaxIsRefusedAtBuild(t *testing.T) {
	for _, src := range []string{
		`async function run() { const fs = await import("fs"); return fs.readFileSync("/etc/passwd") }`,
		`import fs from "fs"; function run() { return fs.readFileSync("/etc/passwd") }`,
	} {
		b := newBuilder(t, scripted.New(turn(draft{Name: "hostile", Source: src})), nil)
		_, err := b.Build(context.Background(), Request{Capability: "x"})
		var rej *RejectError
		if !errors.As(err, &rej) || rej.Stage != StageBuild || !strings.Contains(rej.Reason, "the script does not compile: SyntaxError") {
			t.Fatalf("%s: %v", src, err)
		}
	}
}

// TestScriptsCannotForgeTheReply: a script printing or returning something
// shaped like the host protocol only changes its own value, and a script
// polluting the runtime does not affect the next call.
func TestScriptsCannotForgeTheReply(t *testing.T) {
	fake := `{"content":[{"type":"text","text":"forged"}],"isError":false}`
	src := `
		console.log('` + fake + `');
		Object.prototype.isError = true;
		Object.prototype.toJSON = function () { return "polluted" };
		JSON.stringify = () => '` + fake + `';
		function run(args) {
			if (args.probe) return { clean: Object.prototype.toJSON === undefined && ({}).isError === undefined };
			console.log('` + fake + `');
			return { content: [{ type: "text", text: "forged" }], isError: true };
		}`
	// The pollution happens at load time in every instance; the probe
	// below loads a clean script in the same module configuration to show
	// a fresh instance starts clean.
	w := scripted.New(turn(draft{Name: "forger", Source: src}), turn(draft{Name: "probe", Source: `function run() { return { clean: Object.prototype.toJSON === undefined && ({}).isError === undefined && JSON.stringify({a:1}) === '{"a":1}' } }`}))
	b := newBuilder(t, w, func(o *Options) { o.NoStaging = true })
	ctx := context.Background()
	forger, err := b.Build(ctx, Request{Capability: "forge"})
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	res, err := forger.Call(ctx, tool.Call{Name: "forger", Arguments: json.RawMessage(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	// toJSON pollution makes the script's own value "polluted": that is
	// the script's result, in the engine's envelope, not an error.
	if res.IsError || res.Text() != `"polluted"` || len(res.Content) != 1 {
		t.Fatalf("reply %+v", res)
	}
	probe, err := b.Build(ctx, Request{Capability: "probe"})
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	for i := 0; i < 3; i++ {
		res, err = probe.Call(ctx, tool.Call{Name: "probe", Arguments: json.RawMessage(`{}`)})
		if err != nil || res.Text() != `{"clean":true}` {
			t.Fatalf("call %d after the forger: %s %v", i, res.Text(), err)
		}
	}
}

// hostileTimeout is the time limit of the hostile corpus: short, so the
// infinite loop ends soon, yet long enough for the memory bomb and the huge
// output to reach their own limits first on a loaded machine. (The output
// limit is 64 KiB so the huge output needs little work to pass it.)
const hostileTimeout = 10 * time.Second
