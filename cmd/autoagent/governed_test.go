package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// countSandboxCalls counts the sandboxed calls of a tool in a trace file.
func countSandboxCalls(t *testing.T, tracePath, toolName string) int {
	t.Helper()
	b, err := os.ReadFile(tracePath)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(string(b), "\n") {
		if strings.Contains(line, `"type":"sandbox_call"`) && strings.Contains(line, `"name":"`+toolName+`"`) {
			n++
		}
	}
	return n
}

// A policy asks for approval: the run pauses before anything executes,
// resume --approve runs the call exactly once, and a second resume of the
// finished run runs nothing again.
func TestRunPolicyApprovalAndResume(t *testing.T) {
	e := newCLIEnv(t)
	e.add("echo.wasm")
	e.mustRun(0, "tools", "approve", filepath.Join(e.plugins, "echo.wasm"), "--yes")
	policy := filepath.Join(e.root, "policy.json")
	if err := os.WriteFile(policy, []byte(`{"default":"allow","rules":[{"tool":"echo","action":"approve","reason":"echo needs a human"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	script := e.writeScript(
		`{"tool_calls":[{"id":"call_a","name":"echo","arguments":{"msg":"once"}}]}`,
		`{"text":"Echoed."}`,
	)
	state := filepath.Join(e.root, "run.state.json")
	tracePath := filepath.Join(e.root, "trace.jsonl")
	common := []string{"--provider", "scripted", "--script", script, "--policy", policy, "--trace", tracePath}

	r := e.mustRun(1, append([]string{"run", "--json", "--checkpoint", state}, append(common, "echo once")...)...)
	got := decodeRunJSON(t, r.stdout)
	if got.StopReason != "approval_required" {
		t.Fatalf("stop %q, want approval_required", got.StopReason)
	}
	if !strings.Contains(r.stderr, "call_a") || !strings.Contains(r.stderr, "autoagent resume") {
		t.Errorf("stderr does not say which call waits and how to decide: %q", r.stderr)
	}
	if n := countSandboxCalls(t, tracePath, "echo"); n != 0 {
		t.Fatalf("the paused run executed echo %d times, want 0", n)
	}

	if r := e.run("", append([]string{"resume", state, "--approve", "nope"}, common...)...); r.code != 2 || !strings.Contains(r.stderr, "call_a") {
		t.Errorf("approving an unknown id: exit %d, stderr %q (want 2, naming the pending call)", r.code, r.stderr)
	}

	r = e.mustRun(0, append([]string{"resume", state, "--approve", "call_a", "--json"}, common...)...)
	got = decodeRunJSON(t, r.stdout)
	if got.StopReason != "done" || got.Output != "Echoed." {
		t.Errorf("resumed: stop %q output %q", got.StopReason, got.Output)
	}
	if n := countSandboxCalls(t, tracePath, "echo"); n != 1 {
		t.Fatalf("echo ran %d times after approval, want exactly 1", n)
	}
	e.mustRun(0, append([]string{"resume", state, "--json"}, common...)...)
	if n := countSandboxCalls(t, tracePath, "echo"); n != 1 {
		t.Errorf("resuming the finished run ran echo again (%d calls)", n)
	}
}

func TestRunRejectAndPolicyErrors(t *testing.T) {
	e := newCLIEnv(t)
	policy := filepath.Join(e.root, "policy.json")
	if err := os.WriteFile(policy, []byte(`{"rules":[{"tool":"*","action":"maybe"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	script := e.writeScript(`{"text":"hi"}`)
	r := e.run("", "run", "--provider", "scripted", "--script", script, "--policy", policy, "x")
	if r.code != 1 || !strings.Contains(r.stderr, "rules[0].action") {
		t.Errorf("bad policy: exit %d, stderr %q (want 1 naming rules[0].action)", r.code, r.stderr)
	}
	if r := e.run("", "run", "--provider", "scripted", "--script", script, "--trifecta", "sometimes", "x"); r.code != 2 {
		t.Errorf("--trifecta sometimes: exit %d, want 2", r.code)
	}
}

// A recorded run replays offline to the same result, and a recording cut
// short is a divergence (exit 1) naming the step.
func TestRecordAndReplay(t *testing.T) {
	e := newCLIEnv(t)
	e.add("echo.wasm")
	e.mustRun(0, "tools", "approve", filepath.Join(e.plugins, "echo.wasm"), "--yes")
	script := e.writeScript(
		`{"tool_calls":[{"id":"c1","name":"echo","arguments":{"msg":"recorded"}}],"usage":{"input_tokens":5,"output_tokens":5}}`,
		`{"text":"Done after echo.","usage":{"input_tokens":7,"output_tokens":3}}`,
	)
	rec := filepath.Join(e.root, "run.rec.jsonl")
	first := e.mustRun(0, "run", "--provider", "scripted", "--script", script, "--record", rec, "--json", "go")
	// Replay needs neither the provider nor the plugins: remove them.
	if err := os.RemoveAll(e.plugins); err != nil {
		t.Fatal(err)
	}
	again := e.mustRun(0, "replay", rec, "--json")
	a, b := decodeRunJSON(t, first.stdout), decodeRunJSON(t, again.stdout)
	if a.Output != b.Output || a.Steps != b.Steps || a.Usage != b.Usage || len(a.Messages) != len(b.Messages) {
		t.Errorf("replay differs from the recorded run:\n%s\n%s", first.stdout, again.stdout)
	}
	data, err := os.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	// Drop the last model response: the replay runs out of answers at
	// step 2.
	lines := strings.SplitAfter(strings.TrimRight(string(data), "\n"), "\n")
	last := -1
	for i, l := range lines {
		if strings.Contains(l, `"kind":"llm"`) {
			last = i
		}
	}
	if last < 0 {
		t.Fatalf("no model response in the recording:\n%s", data)
	}
	cut := filepath.Join(e.root, "cut.jsonl")
	if err := os.WriteFile(cut, []byte(strings.Join(slices.Delete(lines, last, last+1), "")), 0o644); err != nil {
		t.Fatal(err)
	}
	r := e.run("", "replay", cut)
	if r.code != 1 || !strings.Contains(r.stderr, "step") {
		t.Errorf("replay of a cut recording: exit %d, stderr %q (want 1, naming the step)", r.code, r.stderr)
	}
}

// A call a sandboxed module makes through its tools: grant and that a
// policy sends for approval is shown whole with the id run prints, and
// resume --approve takes that id: the call runs once, and the module's
// call completes (issue 38: the CLI refused the nested id).
func TestResumeApprovesANestedCall(t *testing.T) {
	e := newCLIEnv(t)
	e.add("echo.wasm")
	e.add("hostcall.wasm")
	e.mustRun(0, "tools", "approve", filepath.Join(e.plugins, "echo.wasm"), "--yes")
	e.mustRun(0, "tools", "approve", filepath.Join(e.plugins, "hostcall.wasm"), "--grant", "tools:echo", "--yes", "--force")
	policy := filepath.Join(e.root, "policy.json")
	if err := os.WriteFile(policy, []byte(`{"default":"allow","rules":[{"tool":"echo","action":"approve","reason":"echo needs a human"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	script := e.writeScript(
		`{"tool_calls":[{"id":"call_a","name":"hostcall","arguments":{"tool":"echo"}}]}`,
		`{"text":"Called."}`,
	)
	state := filepath.Join(e.root, "run.state.json")
	tracePath := filepath.Join(e.root, "trace.jsonl")
	common := []string{"--provider", "scripted", "--script", script, "--policy", policy, "--trace", tracePath}
	r := e.mustRun(1, append([]string{"run", "--json", "--checkpoint", state}, append(common, "go")...)...)
	if got := decodeRunJSON(t, r.stdout); got.StopReason != "approval_required" {
		t.Fatalf("stop %q: %s", got.StopReason, r.stderr)
	}
	for _, want := range []string{"approval required: echo (call call_a/1)", "asked by:  the tool of call call_a", `"city": "Oslo"`, "digest:"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	if n := countSandboxCalls(t, tracePath, "echo"); n != 0 {
		t.Fatalf("echo ran %d times before approval", n)
	}
	r = e.mustRun(0, append([]string{"resume", state, "--approve", "call_a/1", "--json"}, common...)...)
	if got := decodeRunJSON(t, r.stdout); got.StopReason != "done" || got.Output != "Called." {
		t.Errorf("resumed: %+v", got)
	}
	if n := countSandboxCalls(t, tracePath, "echo"); n != 1 {
		t.Errorf("echo ran %d times after approval, want 1", n)
	}
}

// What a reviewer is shown is the whole call: an argument placed far
// after any preview's cut is on the screen (or, past the inline size, in
// the file it names), never hidden.
func TestApprovalShowsTheWholeCall(t *testing.T) {
	e := newCLIEnv(t)
	e.add("echo.wasm")
	e.mustRun(0, "tools", "approve", filepath.Join(e.plugins, "echo.wasm"), "--yes")
	policy := filepath.Join(e.root, "policy.json")
	if err := os.WriteFile(policy, []byte(`{"default":"allow","rules":[{"tool":"echo","action":"approve","reason":"r"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, size := range []int{600, 20000} {
		pad := strings.Repeat("a", size)
		script := e.writeScript(
			`{"tool_calls":[{"id":"call_a","name":"echo","arguments":{"msg":"`+pad+`","then":"rm -rf \u001b[2J/"}}]}`,
			`{"text":"x"}`,
		)
		state := filepath.Join(e.root, "s.json")
		r := e.mustRun(1, "run", "--checkpoint", state, "--provider", "scripted", "--script", script, "--policy", policy, "go")
		shown := r.stderr
		if size > 8<<10 {
			i := strings.Index(shown, "written whole to ")
			if i < 0 {
				t.Fatalf("%d bytes of arguments: no file named:\n%s", size, shown)
			}
			path := strings.Fields(shown[i+len("written whole to "):])[0]
			path = strings.TrimSuffix(path, ":")
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			shown = string(b)
		}
		if !strings.Contains(shown, "rm -rf") || !strings.Contains(shown, pad) {
			t.Errorf("%d bytes of arguments: the argument after them is not shown", size)
		}
		if strings.Contains(r.stderr, "\x1b") {
			t.Errorf("a raw escape reached the terminal")
		}
	}
}
