package loop_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autoagent-go/autoagent/codemode"
	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/loop"
	"github.com/autoagent-go/autoagent/providers/scripted"
	"github.com/autoagent-go/autoagent/tool"
	"github.com/autoagent-go/autoagent/trace"
)

// lineRunner is a codemode.Runner whose "programs" are lines "NAME ARGS":
// each line is a call through loop.CallNested, and the result lists what
// each gave. It stands for the JavaScript engine, which makes its calls
// the same way (codemode/jsprogram tests the engine itself).
type lineRunner struct{ seen []codemode.Program }

func (l *lineRunner) Run(ctx context.Context, p codemode.Program) (tool.Result, error) {
	l.seen = append(l.seen, p)
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(p.Code), "\n") {
		name, args, _ := strings.Cut(line, " ")
		if args == "" {
			args = "{}"
		}
		res, err := loop.CallNested(ctx, tool.Call{Name: name, Arguments: json.RawMessage(args)})
		if err != nil {
			return tool.Result{}, err
		}
		mark := "ok"
		if res.IsError {
			mark = "error"
		}
		out = append(out, name+" "+mark+": "+res.Text())
	}
	return tool.Text(strings.Join(out, "\n")), nil
}

func programCall(id string, lines ...string) llm.ToolCall {
	b, _ := json.Marshal(codemode.Input{Code: strings.Join(lines, "\n")})
	return call(id, codemode.ToolName, string(b))
}

func specNames(specs []llm.ToolSpec) []string {
	var out []string
	for _, s := range specs {
		out = append(out, s.Name)
	}
	return out
}

func TestCodeModeOffersTheProgramTool(t *testing.T) {
	for _, c := range []struct {
		mode codemode.Mode
		want string
	}{
		{codemode.Off, "echo write_file"},
		{codemode.Also, "echo write_file run_program"},
		{codemode.Only, "run_program"},
	} {
		t.Run(c.mode.String(), func(t *testing.T) {
			p := scripted.New(text("done"))
			write := &recorder{name: "write_file"}
			a := &loop.Agent{Provider: p, Tools: nestedRegistry(t, echo(t), write.tool(t)), CodeMode: codemode.Config{Mode: c.mode, Runner: &lineRunner{}}}
			if _, err := a.Run(context.Background(), "go"); err != nil {
				t.Fatal(err)
			}
			req := p.Requests()[0]
			if got := strings.Join(specNames(req.Tools), " "); got != c.want {
				t.Fatalf("offered %q, want %q", got, c.want)
			}
			if c.mode == codemode.Off {
				return
			}
			desc := req.Tools[len(req.Tools)-1].Description
			if !strings.Contains(desc, "declare const tools") || !strings.Contains(desc, "echo(args") || !strings.Contains(desc, "write_file(args") {
				t.Fatalf("run_program declares %s", desc)
			}
		})
	}
}

func TestCodeModeProgramCallsPassTheGate(t *testing.T) {
	write := &recorder{name: "write_file"}
	runner := &lineRunner{}
	p := scripted.New(
		calls(programCall("c1", `write_file {"path":"a"}`, `write_file {"path":"b"}`, `pay {}`, `run_program {"code":"x"}`, `nosuch {}`)),
		text("done"),
	)
	pay := &recorder{name: "pay"}
	a := &loop.Agent{
		Provider: p,
		Tools:    nestedRegistry(t, write.tool(t), pay.tool(t)),
		Checks:   loop.Checks{Policy: policyFor(map[string]loop.Verdict{"pay": loop.VerdictDeny})},
		CodeMode: codemode.Config{Mode: codemode.Only, Runner: runner},
	}
	res, err := a.Run(context.Background(), "go")
	if err != nil {
		t.Fatal(err)
	}
	got := toolResultText(res.Messages, "c1")
	for _, want := range []string{"write_file ok: write_file a", "write_file ok: write_file b", "pay error:", "run_program error: NotAllowed", `nosuch error: unknown tool`} {
		if !strings.Contains(got, want) {
			t.Errorf("program result %q lacks %q", got, want)
		}
	}
	if len(pay.ran()) != 0 {
		t.Fatal("a denied call ran")
	}
	if got := strings.Join(runner.seen[0].Tools, " "); got != "write_file pay" {
		t.Fatalf("the program was declared %q", got)
	}
	// Four calls counted: the program's own and its three that reached
	// the gate (a refused run_program and an unknown tool do not).
	if res.State.ToolCalls != 4 {
		t.Fatalf("ToolCalls %d, want 4", res.State.ToolCalls)
	}
}

func TestCodeModeOnlyRefusesDirectCalls(t *testing.T) {
	write := &recorder{name: "write_file"}
	a := &loop.Agent{
		Provider: scripted.New(calls(call("c1", "write_file", `{"path":"x"}`)), text("done")),
		Tools:    nestedRegistry(t, write.tool(t)),
		CodeMode: codemode.Config{Mode: codemode.Only, Runner: &lineRunner{}},
	}
	res, err := a.Run(context.Background(), "go")
	if err != nil {
		t.Fatal(err)
	}
	if len(write.ran()) != 0 || !strings.Contains(toolResultText(res.Messages, "c1"), "ToolNotOffered") {
		t.Fatalf("direct call in mode only: ran %q, result %q", write.ran(), toolResultText(res.Messages, "c1"))
	}
	// Streamed, the call is not started early either (an early start
	// is traced as it begins; the tool phase would discard it, but the
	// tool may have run by then).
	write2 := &recorder{name: "write_file", flags: tool.Flags{Idempotent: true}}
	a.Tools = nestedRegistry(t, write2.tool(t))
	a.Provider = scripted.New(calls(call("c1", "write_file", `{"path":"x"}`)), text("done"))
	var tr events
	a.Tracer = tr.tracer()
	for _, err := range a.Stream(context.Background(), "go") {
		if err != nil {
			t.Fatal(err)
		}
	}
	if early := tr.of(trace.ToolCallEarlyStart); len(early) != 0 || len(write2.ran()) != 0 {
		t.Fatalf("a direct call started early in mode only: %d early starts, ran %q", len(early), write2.ran())
	}
}

func TestCodeModeProgramCallLimit(t *testing.T) {
	write := &recorder{name: "write_file"}
	var lines []string
	for i := range 5 {
		lines = append(lines, fmt.Sprintf(`write_file {"path":"%d"}`, i))
	}
	a := &loop.Agent{
		Provider: scripted.New(calls(programCall("c1", lines...)), text("done")),
		Tools:    nestedRegistry(t, write.tool(t)),
		CodeMode: codemode.Config{Mode: codemode.Only, Runner: &lineRunner{}, MaxCalls: 3},
	}
	res, err := a.Run(context.Background(), "go")
	if err != nil {
		t.Fatal(err)
	}
	if got := write.ran(); len(got) != 3 {
		t.Fatalf("ran %q, want 3 calls", got)
	}
	if !strings.Contains(toolResultText(res.Messages, "c1"), "ProgramCallLimit") {
		t.Fatalf("result %q", toolResultText(res.Messages, "c1"))
	}
}

func TestCodeModeToolSearchAppliesToDeclarations(t *testing.T) {
	var tools []tool.Tool
	recs := map[string]*recorder{}
	for i := range 4 {
		r := &recorder{name: fmt.Sprintf("tool_%d", i)}
		recs[r.name] = r
		tools = append(tools, r.tool(t))
	}
	weather, err := tool.New("weather", "Forecast weather for a city.", func(context.Context, struct{}) (string, error) { return "sunny", nil })
	if err != nil {
		t.Fatal(err)
	}
	tools = append(tools, weather)
	runner := &lineRunner{}
	p := scripted.New(
		calls(programCall("c1", "tool_1 {}")),
		calls(call("c2", loop.FindToolsName, `{"query":"weather forecast"}`)),
		calls(programCall("c3", "weather {}")),
		text("done"),
	)
	a := &loop.Agent{Provider: p, Tools: nestedRegistry(t, tools...), ToolSearchThreshold: 2,
		CodeMode: codemode.Config{Mode: codemode.Only, Runner: runner}}
	res, err := a.Run(context.Background(), "go")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(specNames(p.Requests()[0].Tools), " "); got != "find_tools run_program" {
		t.Fatalf("offered %q", got)
	}
	if r := toolResultText(res.Messages, "c1"); !strings.Contains(r, "ToolNotOffered") || len(recs["tool_1"].ran()) != 0 {
		t.Fatalf("an undeclared tool was called from a program: %q", r)
	}
	if r := toolResultText(res.Messages, "c3"); !strings.Contains(r, "weather ok: sunny") {
		t.Fatalf("a found tool was refused: %q", r)
	}
	if d := p.Requests()[2].Tools[1].Description; !strings.Contains(d, "weather(args") || strings.Contains(d, "tool_1(args") {
		t.Fatalf("declared after the search: %s", d)
	}
}

func TestCodeModeConfigErrors(t *testing.T) {
	clash, err := tool.New(codemode.ToolName, "mine", func(context.Context, struct{}) (string, error) { return "", nil })
	if err != nil {
		t.Fatal(err)
	}
	for name, a := range map[string]*loop.Agent{
		"no runner":  {CodeMode: codemode.Config{Mode: codemode.Only}},
		"bad mode":   {CodeMode: codemode.Config{Mode: "sometimes", Runner: &lineRunner{}}},
		"negative":   {CodeMode: codemode.Config{Mode: codemode.Also, Runner: &lineRunner{}, MaxCalls: -1}},
		"name clash": {Tools: nestedRegistry(t, clash), CodeMode: codemode.Config{Mode: codemode.Also, Runner: &lineRunner{}}},
	} {
		a.Provider = scripted.New(text("done"))
		if _, err := a.Run(context.Background(), "go"); !errors.Is(err, loop.ErrCodeMode) {
			t.Errorf("%s: err %v, want ErrCodeMode", name, err)
		}
	}
}

// bilingual is a lineRunner that says it runs JavaScript and Python.
type bilingual struct{ *lineRunner }

func (bilingual) Languages() []string { return []string{codemode.JavaScript, codemode.Python} }

// A program in Python paused for approval resumes only where Python is
// offered: resumed with a JavaScript runner, the run says so instead of
// running the program in the wrong engine (an error result, and the
// approved call never made).
func TestCodeModeResumeNeedsTheProgramsLanguage(t *testing.T) {
	write := &recorder{name: "write_file"}
	b, _ := json.Marshal(codemode.Input{Code: `write_file {"path":"b"}`, Language: "Python"})
	a := &loop.Agent{
		Provider: scripted.New(calls(call("c1", codemode.ToolName, string(b))), text("done")),
		Tools:    nestedRegistry(t, write.tool(t)),
		Checks:   loop.Checks{Policy: policyFor(map[string]loop.Verdict{"write_file": loop.VerdictApprove})},
		CodeMode: codemode.Config{Mode: codemode.Only, Runner: bilingual{&lineRunner{}}},
	}
	res, err := a.Run(context.Background(), "go")
	if !errors.Is(err, loop.ErrApprovalRequired) {
		t.Fatalf("no pause: %v", err)
	}
	js := *a
	js.CodeMode.Runner = &lineRunner{}
	if _, err := js.Resume(context.Background(), res.State.Clone(), loop.Approve("c1/1")); !errors.Is(err, loop.ErrCodeMode) ||
		!strings.Contains(err.Error(), "ran a program in python") || !strings.Contains(err.Error(), "offered now: javascript") {
		t.Fatalf("resumed without Python: %v", err)
	}
	if _, err := a.Resume(context.Background(), res.State, loop.Approve("c1/1")); err != nil {
		t.Fatal(err)
	}
	if len(write.ran()) != 1 {
		t.Fatalf("write ran %d times, want once", len(write.ran()))
	}
}

// A program paused for approval is resumed with code mode on: the program
// runs again, its earlier call is replayed, and the approved one runs once.
// Resumed with code mode off, the run says so instead of losing the call.
func TestCodeModeResumeAfterApproval(t *testing.T) {
	write := &recorder{name: "write_file"}
	read := &recorder{name: "read_file"}
	runner := &lineRunner{}
	a := &loop.Agent{
		Provider: scripted.New(calls(programCall("c1", `read_file {"path":"a"}`, `write_file {"path":"b"}`)), text("done")),
		Tools:    nestedRegistry(t, write.tool(t), read.tool(t)),
		Checks:   loop.Checks{Policy: policyFor(map[string]loop.Verdict{"write_file": loop.VerdictApprove})},
		CodeMode: codemode.Config{Mode: codemode.Only, Runner: runner},
	}
	res, err := a.Run(context.Background(), "go")
	if !errors.Is(err, loop.ErrApprovalRequired) || res.State.Pending[0].Call.ID != "c1/2" {
		t.Fatalf("no pause at c1/2: %v", err)
	}
	off := *a
	off.CodeMode = codemode.Config{}
	if _, err := off.Resume(context.Background(), res.State.Clone(), loop.Approve("c1/2")); !errors.Is(err, loop.ErrCodeMode) {
		t.Fatalf("resumed with code mode off: %v", err)
	}
	res, err = a.Resume(context.Background(), res.State, loop.Approve("c1/2"))
	if err != nil {
		t.Fatal(err)
	}
	if len(read.ran()) != 1 || len(write.ran()) != 1 || len(runner.seen) != 2 {
		t.Fatalf("read ran %d, write ran %d, program ran %d times; want 1, 1, 2", len(read.ran()), len(write.ran()), len(runner.seen))
	}
	if got := toolResultText(res.Messages, "c1"); !strings.Contains(got, "write_file ok: write_file b") {
		t.Fatalf("program result %q", got)
	}
	// A turn whose program has its result needs no code mode to go on.
	st := res.State.Clone()
	st.Messages = st.Messages[:len(st.Messages)-1] // the final answer: the model is asked again
	st.Status = ""
	off.Provider = scripted.New(text("done again"))
	if res, err := off.Resume(context.Background(), st); err != nil || res.Output != "done again" {
		t.Fatalf("resumed after the program's turn with code mode off: %v", err)
	}
}

// A code-mode run recorded replays: offline, the program's recorded result
// is given back and no tool runs; with the tools ("model-only"), the
// program runs again and its calls with it.
func TestCodeModeRecordAndReplay(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.jsonl")
	rec, err := loop.CreateRecording(path, loop.RecordOptions{})
	if err != nil {
		t.Fatal(err)
	}
	write := &recorder{name: "write_file"}
	cm := codemode.Config{Mode: codemode.Only, Runner: &lineRunner{}}
	a := &loop.Agent{
		Provider: scripted.New(calls(programCall("c1", `write_file {"path":"a"}`, `write_file {"path":"b"}`)), text("done")),
		Tools:    nestedRegistry(t, write.tool(t)),
		CodeMode: cm, Recorder: rec,
	}
	orig, err := a.Run(context.Background(), "go")
	if err != nil {
		t.Fatal(err)
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	// Offline, the recording says the run was in code mode: nothing to give.
	res, err := loop.Replay(context.Background(), path, loop.ReplayOptions{})
	if err != nil {
		t.Fatalf("offline replay: %v", err)
	}
	if res.Output != orig.Output || toolResultText(res.Messages, "c1") != toolResultText(orig.Messages, "c1") || len(write.ran()) != 2 {
		t.Fatalf("offline replay: %q, program %q, writes %d", res.Output, toolResultText(res.Messages, "c1"), len(write.ran()))
	}
	if r, err := loop.OpenRecording(path); err != nil || r.CodeMode() != codemode.Only {
		t.Fatalf("the recording's code mode: %v", err)
	}
	// With live tools, the programs need a runner.
	if _, err := loop.Replay(context.Background(), path, loop.ReplayOptions{Tools: nestedRegistry(t, (&recorder{name: "write_file"}).tool(t))}); !errors.Is(err, loop.ErrCodeMode) ||
		!strings.Contains(err.Error(), "the recorded run was in code mode") {
		t.Fatalf("live replay without a runner: %v", err)
	}
	again := &recorder{name: "write_file"}
	if _, err := loop.Replay(context.Background(), path, loop.ReplayOptions{Tools: nestedRegistry(t, again.tool(t)), Agent: &loop.Agent{CodeMode: cm}}); err != nil {
		t.Fatalf("model-only replay: %v", err)
	}
	if len(again.ran()) != 2 {
		t.Fatalf("model-only replay ran the program's calls %d times, want 2", len(again.ran()))
	}
}
