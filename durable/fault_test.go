package durable_test

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/autoagent-go/autoagent/codemode"
	"github.com/autoagent-go/autoagent/durable"
	"github.com/autoagent-go/autoagent/internal/temporaltest"
	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/loop"
	"github.com/autoagent-go/autoagent/policy"
	"github.com/autoagent-go/autoagent/tool"
)

// The fault tests run workers as processes of their own (this test binary,
// re-run with DURABLE_TEST_WORKER set), so that one can be killed with
// SIGKILL mid-call.

func TestMain(m *testing.M) {
	if dir := os.Getenv("DURABLE_TEST_WORKER"); dir != "" {
		os.Exit(workerMain(dir))
	}
	os.Exit(m.Run())
}

// workerMain is a worker process: its model and tool are faultAgent's,
// over the files of dir.
func workerMain(dir string) int {
	c, err := client.Dial(client.Options{HostPort: os.Getenv("DURABLE_TEST_ADDR"), Logger: quiet})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	agent := faultAgent(dir, os.Getenv("DURABLE_TEST_IDEMPOTENT") == "1")
	if os.Getenv("DURABLE_TEST_PROGRAM") == "1" {
		agent = programFaultAgent(dir)
	}
	w := durable.NewWorker(c, os.Getenv("DURABLE_TEST_QUEUE"), &durable.Activities{Agent: agent})
	if err := w.Run(nil); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// stepModel answers by the number of assistant messages in the request,
// so any worker gives the answer of the step the run is at: two calls of
// "pay", then the answer. While dir/hold-model exists it blocks in the
// second call.
type stepModel struct{ dir string }

func (m stepModel) Complete(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	step := 0
	for _, msg := range req.Messages {
		if msg.Role == llm.RoleAssistant {
			step++
		}
	}
	appendLine(m.dir, "model.log", fmt.Sprint(step))
	if step == 1 {
		hold(ctx, filepath.Join(m.dir, "hold-model"))
	}
	var msg llm.Message
	switch step {
	case 0, 1:
		msg = llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{{Type: llm.PartToolCall, ToolCall: &llm.ToolCall{ID: fmt.Sprintf("c%d", step+1), Name: "pay", Arguments: json.RawMessage(fmt.Sprintf(`{"n":%d}`, step+1))}}}}
	default:
		msg = llm.AssistantText("paid")
	}
	return &llm.Response{Message: msg, Usage: &llm.Usage{InputTokens: 10, OutputTokens: 2}, FinishReason: llm.FinishStop}, nil
}

func (m stepModel) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.StreamEvent, error] {
	return llm.StreamFromComplete(ctx, req, m.Complete)
}

// payTool's side effect is a line in dir/ran.log per execution; while
// dir/hold exists it blocks after the side effect, before it returns (the
// window where a crash leaves the outcome unknown).
func payTool(dir string, idempotent bool) tool.Tool {
	t, err := tool.NewFromSpec(llm.ToolSpec{Name: "pay", Description: "pays", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, c tool.Call) (tool.Result, error) {
		info, _ := loop.CallInfoFrom(ctx)
		appendLine(dir, "ran.log", info.IdempotencyKey())
		hold(ctx, filepath.Join(dir, "hold"))
		return tool.Text("paid " + string(c.Arguments)), nil
	})
	if err != nil {
		panic(err)
	}
	return flagged{t, tool.Flags{Idempotent: idempotent}}
}

type flagged struct {
	tool.Tool
	flags tool.Flags
}

func (f flagged) Flags() tool.Flags { return f.flags }

func faultAgent(dir string, idempotent bool) *loop.Agent {
	reg, err := tool.NewRegistry(payTool(dir, idempotent))
	if err != nil {
		panic(err)
	}
	return &loop.Agent{Provider: stepModel{dir}, Tools: reg, System: "You pay.", Bounds: loop.Bounds{MaxSteps: 8}}
}

func hold(ctx context.Context, path string) {
	for {
		if _, err := os.Stat(path); err != nil || ctx.Err() != nil {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func appendLine(dir, name, line string) {
	f, err := os.OpenFile(filepath.Join(dir, name), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		panic(err)
	}
	defer f.Close()
	fmt.Fprintln(f, line)
}

func lines(t *testing.T, dir, name string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(string(b))
}

// spawnWorker starts a worker process and returns a function that kills
// it with SIGKILL; env adds to its environment.
func spawnWorker(t *testing.T, srv *temporaltest.Server, queue, dir string, idempotent bool, env ...string) (kill func()) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	idem := "0"
	if idempotent {
		idem = "1"
	}
	cmd.Env = append(os.Environ(), "DURABLE_TEST_WORKER="+dir, "DURABLE_TEST_ADDR="+srv.Addr, "DURABLE_TEST_QUEUE="+queue, "DURABLE_TEST_IDEMPOTENT="+idem)
	cmd.Env = append(cmd.Env, env...)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killed := false
	kill = func() {
		if !killed {
			killed = true
			_ = cmd.Process.Signal(syscall.SIGKILL)
			_ = cmd.Wait()
		}
	}
	t.Cleanup(kill)
	return kill
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// uninterrupted is the transcript of the run no worker crashed in.
func uninterrupted(t *testing.T) *loop.Result {
	t.Helper()
	res, err := faultAgent(t.TempDir(), true).Run(t.Context(), "pay twice")
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// A worker killed between a tool's execution and its completion report:
// a second worker finishes the run. A tool that is not idempotent ran
// once and is reported OutcomeUnknown, never run twice; an idempotent one
// runs again under the same idempotency key and the transcript is the
// uninterrupted run's.
func TestKillWorkerDuringTool(t *testing.T) {
	srv := temporaltest.Start(t)
	c := dial(t, srv)
	want := uninterrupted(t)
	for _, idem := range []bool{false, true} {
		t.Run(fmt.Sprintf("idempotent=%v", idem), func(t *testing.T) {
			dir := t.TempDir()
			queue := fmt.Sprintf("q-kill-tool-%v", idem)
			appendLine(dir, "hold", "")
			kill := spawnWorker(t, srv, queue, dir, idem)
			dc := &durable.Client{Temporal: c, TaskQueue: queue}
			id, err := dc.Start(t.Context(), "", durable.RunInput{Prompt: "pay twice"}, durable.Options{Heartbeat: 2 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			waitFor(t, "the first call's side effect", func() bool { return len(lines(t, dir, "ran.log")) == 1 })
			kill()
			os.Remove(filepath.Join(dir, "hold"))
			startWorker(t, c, queue, &durable.Activities{Agent: faultAgent(dir, idem)})
			got, err := dc.Result(t.Context(), id)
			if err != nil {
				t.Fatal(err)
			}
			ran := lines(t, dir, "ran.log")
			transcript := jsonOf(t, got.Messages)
			if !idem {
				if strings.Join(ran, " ") != id+"/c1 "+id+"/c2" {
					t.Errorf("executions: %v (want c1 once, c2 once)", ran)
				}
				if !strings.Contains(transcript, "OutcomeUnknown: `pay`") || got.Output != "paid" {
					t.Errorf("result: %s", jsonOf(t, got))
				}
				return
			}
			if strings.Join(ran, " ") != id+"/c1 "+id+"/c1 "+id+"/c2" {
				t.Errorf("executions: %v (want c1 twice under one key, c2 once)", ran)
			}
			if g, w := transcript, jsonOf(t, want.Messages); g != w {
				t.Errorf("the transcript differs from the uninterrupted run's:\n got %s\nwant %s", g, w)
			}
		})
	}
}

// A worker killed during a model call: the call is made again on the
// second worker, and the transcript is the uninterrupted run's. What runs
// again depends on what the history had recorded:
//   - a model call that is an activity (the default) is recorded when it
//     returns, and so is everything before a call of a tool that is not
//     idempotent (its activity ends the workflow task): the held call
//     alone runs again, "0 1 1 2";
//   - local model calls (LocalModelCalls) and an idempotent tool's local
//     calls are recorded
//     when their workflow task completes, which here is the run's first:
//     the second worker runs the run from its start again, the tool call
//     under the same key, "0 1 0 1 2" (unless the SDK heartbeated the task
//     before the kill, 8 s after it began, which records the calls that had
//     returned: then "0 1 1 2" as above).
func TestKillWorkerDuringModelCall(t *testing.T) {
	srv := temporaltest.Start(t)
	c := dial(t, srv)
	cases := []struct {
		idempotent bool
		opts       durable.Options
		models     []string // model calls by step, each outcome allowed
		tools      []string // tool executions by call, for each of them
	}{
		{false, durable.Options{}, []string{"0 1 1 2"}, []string{"c1 c2"}},
		{true, durable.Options{}, []string{"0 1 1 2"}, []string{"c1 c2"}},
		{false, durable.Options{LocalModelCalls: true}, []string{"0 1 1 2"}, []string{"c1 c2"}},
		{true, durable.Options{LocalModelCalls: true}, []string{"0 1 0 1 2", "0 1 1 2"}, []string{"c1 c1 c2", "c1 c2"}},
	}
	for i, tc := range cases {
		t.Run(fmt.Sprintf("idempotent=%v,LocalModelCalls=%v", tc.idempotent, tc.opts.LocalModelCalls), func(t *testing.T) {
			// Each waits for a workflow task's timeout (10 s) after its
			// kill: they wait together.
			t.Parallel()
			want, err := faultAgent(t.TempDir(), tc.idempotent).Run(t.Context(), "pay twice")
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			queue := fmt.Sprintf("q-kill-model-%d", i)
			appendLine(dir, "hold-model", "")
			kill := spawnWorker(t, srv, queue, dir, tc.idempotent)
			dc := &durable.Client{Temporal: c, TaskQueue: queue}
			tc.opts.Heartbeat = 2 * time.Second
			id, err := dc.Start(t.Context(), "", durable.RunInput{Prompt: "pay twice"}, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			waitFor(t, "the second model call", func() bool { return len(lines(t, dir, "model.log")) == 2 })
			kill()
			os.Remove(filepath.Join(dir, "hold-model"))
			startWorker(t, c, queue, &durable.Activities{Agent: faultAgent(dir, tc.idempotent)})
			got, err := dc.Result(t.Context(), id)
			if err != nil {
				t.Fatal(err)
			}
			if g, w := jsonOf(t, got.Messages), jsonOf(t, want.Messages); g != w {
				t.Errorf("the transcript differs from the uninterrupted run's:\n got %s\nwant %s", g, w)
			}
			models := strings.Join(lines(t, dir, "model.log"), " ")
			tools := strings.ReplaceAll(strings.Join(lines(t, dir, "ran.log"), " "), id+"/", "")
			k := slices.Index(tc.models, models)
			if k < 0 || tools != tc.tools[k] {
				t.Errorf("model calls by step %q and tool executions %q; want one of %q with %q", models, tools, tc.models, tc.tools)
			}
			t.Logf("model calls by step %q, tool executions %q", models, tools)
		})
	}
}

// An approval sent while no worker runs is applied once one starts; a
// server restarted mid-run does not lose the run.
func TestApprovalWithoutWorkerAndServerRestart(t *testing.T) {
	srv := temporaltest.Start(t)
	c := dial(t, srv)
	dir := t.TempDir()
	pol, err := policy.Parse([]byte(approvePay))
	if err != nil {
		t.Fatal(err)
	}
	agent := func() *loop.Agent {
		a := faultAgent(dir, false)
		a.Checks.Policy = pol
		return a
	}
	w1 := durable.NewWorker(c, "q-approve", &durable.Activities{Agent: agent()})
	if err := w1.Start(); err != nil {
		t.Fatal(err)
	}
	dc := &durable.Client{Temporal: c, TaskQueue: "q-approve"}
	id, err := dc.Start(t.Context(), "", durable.RunInput{Prompt: "pay twice"}, durable.Options{})
	if err != nil {
		t.Fatal(err)
	}
	waitState(t, dc, id, "awaiting_approval")
	w1.Stop()

	decided := make(chan error, 1)
	go func() {
		_, err := dc.Decide(context.Background(), id, durable.Decision{CallID: "c1", Approved: true})
		decided <- err
	}()
	select {
	case err := <-decided:
		t.Fatalf("the decision was answered with no worker running: %v", err)
	case <-time.After(time.Second):
	}
	startWorker(t, c, "q-approve", &durable.Activities{Agent: agent()})
	if err := <-decided; err != nil {
		t.Fatalf("the decision, once a worker runs: %v", err)
	}
	waitState(t, dc, id, "awaiting_approval") // c2 now

	srv.Restart()
	waitFor(t, "the server after its restart", func() bool {
		st, err := dc.Status(t.Context(), id)
		return err == nil && st.State == "awaiting_approval"
	})
	if _, err := dc.Decide(t.Context(), id, durable.Decision{CallID: "c2", Approved: true}); err != nil {
		t.Fatal(err)
	}
	got, err := dc.Result(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	if got.Output != "paid" || len(lines(t, dir, "ran.log")) != 2 {
		t.Errorf("result %+v, executions %v", got, lines(t, dir, "ran.log"))
	}
}

// faultProgram pays twice, and between the calls holds while
// dir/hold-program exists.
const faultProgram = "pay {\"n\":1}\nhold\npay {\"n\":2}"

// programFaultAgent runs faultProgram with payTool, not idempotent.
func programFaultAgent(dir string) *loop.Agent {
	reg, err := tool.NewRegistry(payTool(dir, false))
	if err != nil {
		panic(err)
	}
	return &loop.Agent{
		Provider: programTurns(faultProgram), Tools: reg, System: "You pay.", Bounds: loop.Bounds{MaxSteps: 8},
		CodeMode: codemode.Config{Mode: codemode.Only, Runner: &lineRunner{hold: filepath.Join(dir, "hold-program")}},
	}
}

// A worker killed mid-program: a second worker finishes the run, and
// no call of the tool that is not idempotent runs twice. Killed during
// the program's first call (after its side effect), the call is
// OutcomeUnknown to the program, which goes on; killed while the program
// runs on the worker after that call, the program runs again on the
// second worker, and the call it made is answered from the record.
func TestKillWorkerDuringProgram(t *testing.T) {
	srv := temporaltest.Start(t)
	c := dial(t, srv)
	for _, during := range []string{"tool", "program"} {
		t.Run(during, func(t *testing.T) {
			dir := t.TempDir()
			queue := "q-kill-program-" + during
			held := func() bool { return len(lines(t, dir, "ran.log")) == 1 }
			if during == "tool" {
				appendLine(dir, "hold", "")
			} else {
				appendLine(dir, "hold-program", "")
				held = func() bool {
					_, err := os.Stat(filepath.Join(dir, "hold-program.held"))
					return err == nil && len(lines(t, dir, "ran.log")) == 1
				}
			}
			kill := spawnWorker(t, srv, queue, dir, false, "DURABLE_TEST_PROGRAM=1")
			dc := &durable.Client{Temporal: c, TaskQueue: queue}
			id, err := dc.Start(t.Context(), "", durable.RunInput{Prompt: "pay twice"}, durable.Options{Heartbeat: 2 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			waitFor(t, "the worker held mid-"+during, held)
			kill()
			os.Remove(filepath.Join(dir, "hold"))
			os.Remove(filepath.Join(dir, "hold-program"))
			startWorker(t, c, queue, &durable.Activities{Agent: programFaultAgent(dir)})
			got, err := dc.Result(t.Context(), id)
			if err != nil {
				t.Fatal(err)
			}
			if ran := lines(t, dir, "ran.log"); strings.Join(ran, " ") != id+"/c1/1 "+id+"/c1/2" {
				t.Errorf("executions: %v (want c1/1 once, c1/2 once)", ran)
			}
			first := "pay ok: paid {\\\"n\\\":1}"
			if during == "tool" {
				first = "pay error: OutcomeUnknown: `pay`"
			}
			transcript := jsonOf(t, got.Messages)
			if !strings.Contains(transcript, first) || !strings.Contains(transcript, "pay ok: paid {\\\"n\\\":2}") || got.Output != "done" {
				t.Errorf("want %s, then the second call paid; result: %s", first, transcript)
			}
		})
	}
}
