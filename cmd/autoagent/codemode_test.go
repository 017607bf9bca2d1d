package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autoagent-go/autoagent/codemode/pyprogram"
	"github.com/autoagent-go/autoagent/internal/enginetest"
	"github.com/autoagent-go/autoagent/internal/pyenginetest"
	"github.com/autoagent-go/autoagent/synth"
)

// run --code-mode only: the model's program calls a sandboxed tool; a
// call of the program awaiting approval pauses the run, shows the call and
// its program, and resume --approve runs it once; resumed without code
// mode, the run says how to resume it.
func TestRunCodeModeApprovalAndResume(t *testing.T) {
	engine := enginetest.Path(t, synth.BridgeEngineFile)
	t.Setenv(synth.EngineEnv, filepath.Join(filepath.Dir(engine), synth.EngineFile))
	e := newCLIEnv(t)
	e.add("echo.wasm")
	e.mustRun(0, "tools", "approve", filepath.Join(e.plugins, "echo.wasm"), "--yes")
	policy := filepath.Join(e.root, "policy.json")
	if err := os.WriteFile(policy, []byte(`{"default":"allow","rules":[{"tool":"echo","action":"approve","reason":"echo needs a human"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _ := json.Marshal(map[string]string{"code": "const r = await tools.echo({msg: \"once\"})\nreturn r"})
	script := e.writeScript(
		`{"tool_calls":[{"id":"call_p","name":"run_program","arguments":`+string(code)+`}]}`,
		`{"text":"Echoed from a program."}`,
	)
	state := filepath.Join(e.root, "run.state.json")
	tracePath := filepath.Join(e.root, "trace.jsonl")
	common := []string{"--provider", "scripted", "--script", script, "--policy", policy, "--trace", tracePath}
	r := e.mustRun(1, append([]string{"run", "--json", "--code-mode", "only", "--checkpoint", state}, append(common, "echo once")...)...)
	if got := decodeRunJSON(t, r.stdout); got.StopReason != "approval_required" {
		t.Fatalf("stop %q: %s", got.StopReason, r.stderr)
	}
	for _, want := range []string{"approval required: echo (call call_p/1)", "asked by:  the tool of call call_p", `"msg": "once"`} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	if n := countSandboxCalls(t, tracePath, "echo"); n != 0 {
		t.Fatalf("echo ran %d times before approval", n)
	}
	r = e.run("", append([]string{"resume", state, "--approve", "call_p/1"}, common...)...)
	if r.code == 0 || !strings.Contains(r.stderr, "code mode on") {
		t.Errorf("resumed without code mode: exit %d, stderr %q", r.code, r.stderr)
	}
	r = e.mustRun(0, append([]string{"resume", state, "--approve", "call_p/1", "--code-mode", "only", "--json"}, common...)...)
	got := decodeRunJSON(t, r.stdout)
	if got.StopReason != "done" || got.Output != "Echoed from a program." {
		t.Errorf("resumed: %+v", got)
	}
	if n := countSandboxCalls(t, tracePath, "echo"); n != 1 {
		t.Errorf("echo ran %d times after approval, want 1", n)
	}
	var program string
	for _, m := range got.Messages {
		for _, p := range m.Parts {
			if p.ToolResult != nil && p.ToolResult.CallID == "call_p" {
				program = p.ToolResult.Content
			}
		}
	}
	if !strings.Contains(program, `"result":`) || !strings.Contains(program, "once") {
		t.Errorf("the program's result: %q", program)
	}
	if r := e.run("", "run", "--code-mode", "sometimes", "--provider", "scripted", "--script", script, "x"); r.code != 2 || !strings.Contains(r.stderr, "off, also or only") {
		t.Errorf("a bad --code-mode: exit %d, stderr %q", r.code, r.stderr)
	}
	if r := e.run("", "run", "--code-mode", "only", "--code-language", "javascript,cobol", "--provider", "scripted", "--script", script, "x"); r.code != 2 || !strings.Contains(r.stderr, `--code-language: code-mode language "cobol": want javascript or python`) {
		t.Errorf("a bad --code-language: exit %d, stderr %q", r.code, r.stderr)
	}
}

// run --code-language python: the model's program is Python, and calls a
// sandboxed tool through the same gate.
func TestRunCodeModePython(t *testing.T) {
	t.Setenv(pyprogram.EngineEnv, pyenginetest.Path(t))
	e := newCLIEnv(t)
	e.add("echo.wasm")
	e.mustRun(0, "tools", "approve", filepath.Join(e.plugins, "echo.wasm"), "--yes")
	code, _ := json.Marshal(map[string]string{"language": "python", "code": "r = tools.echo(msg='from python')\nreturn r"})
	script := e.writeScript(
		`{"tool_calls":[{"id":"call_p","name":"run_program","arguments":`+string(code)+`}]}`,
		`{"text":"Echoed from a Python program."}`,
	)
	tracePath := filepath.Join(e.root, "trace.jsonl")
	r := e.mustRun(0, "run", "--json", "--code-mode", "only", "--code-language", "python", "--provider", "scripted", "--script", script, "--trace", tracePath, "echo")
	got := decodeRunJSON(t, r.stdout)
	if got.StopReason != "done" || got.Output != "Echoed from a Python program." {
		t.Fatalf("run: %+v\n%s", got, r.stderr)
	}
	var program string
	for _, m := range got.Messages {
		for _, p := range m.Parts {
			if p.ToolResult != nil && p.ToolResult.CallID == "call_p" {
				program = p.ToolResult.Content
			}
		}
	}
	if !strings.Contains(program, `"result":`) || !strings.Contains(program, "from python") {
		t.Errorf("the program's result: %q", program)
	}
	if n := countSandboxCalls(t, tracePath, "echo"); n != 1 {
		t.Errorf("echo ran %d times, want 1", n)
	}
	// The language of programs without code mode is a mistake said, not
	// ignored.
	r = e.run("", "run", "--code-language", "python", "--provider", "scripted", "--script", script, "echo")
	if r.code != 2 || !strings.Contains(r.stderr, "give --code-mode also or only") {
		t.Errorf("--code-language without --code-mode: exit %d, stderr %q", r.code, r.stderr)
	}
}

// A code-mode run recorded with --record replays: offline (no program,
// no tool runs) and with --live-tools (the program runs again in the
// engine, its call through the gate).
func TestReplayCodeModeRecording(t *testing.T) {
	engine := enginetest.Path(t, synth.BridgeEngineFile)
	t.Setenv(synth.EngineEnv, filepath.Join(filepath.Dir(engine), synth.EngineFile))
	e := newCLIEnv(t)
	e.add("echo.wasm")
	e.mustRun(0, "tools", "approve", filepath.Join(e.plugins, "echo.wasm"), "--yes")
	code, _ := json.Marshal(map[string]string{"code": "return await tools.echo({msg: \"twice\"})"})
	script := e.writeScript(
		`{"tool_calls":[{"id":"call_p","name":"run_program","arguments":`+string(code)+`}]}`,
		`{"text":"Echoed."}`,
	)
	recording := filepath.Join(e.root, "run.rec.jsonl")
	tracePath := filepath.Join(e.root, "trace.jsonl")
	e.mustRun(0, "run", "--code-mode", "only", "--provider", "scripted", "--script", script, "--record", recording, "--trace", tracePath, "echo")
	if n := countSandboxCalls(t, tracePath, "echo"); n != 1 {
		t.Fatalf("echo ran %d times in the run", n)
	}
	r := e.mustRun(0, "replay", recording, "--json")
	if got := decodeRunJSON(t, r.stdout); got.Output != "Echoed." || got.StopReason != "done" {
		t.Fatalf("offline replay: %+v\n%s", got, r.stderr)
	}
	r = e.mustRun(0, "replay", recording, "--live-tools", "--json")
	if got := decodeRunJSON(t, r.stdout); got.Output != "Echoed." {
		t.Fatalf("live replay: %+v\n%s", got, r.stderr)
	}
}
