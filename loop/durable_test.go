package loop_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/loop"
	"github.com/autoagent-go/autoagent/providers/scripted"
	"github.com/autoagent-go/autoagent/tool"
)

func TestCheckpointAfterEveryStep(t *testing.T) {
	var states []loop.RunState
	p := scripted.New(calls(call("c1", "echo", `{"text":"a"}`)), text("done"))
	a := &loop.Agent{Provider: p, Tools: registry(t, echo(t)), Checkpoint: func(_ context.Context, st *loop.RunState) error {
		b, _ := json.Marshal(st) // the callback must copy what it keeps
		var cp loop.RunState
		_ = json.Unmarshal(b, &cp)
		states = append(states, cp)
		return nil
	}}
	if _, err := a.Run(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	type snap struct {
		step, msgs, pending int
		status              loop.StopReason
	}
	var got []snap
	for _, s := range states {
		got = append(got, snap{s.Step, len(s.Messages), len(s.PendingTurn()), s.Status})
	}
	want := []snap{
		{1, 3, 1, ""},     // the turn's calls, before they run
		{1, 4, 0, ""},     // after the step's results
		{2, 5, 0, "done"}, // the final answer
	}
	if len(got) != len(want) {
		t.Fatalf("checkpoints = %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("checkpoint %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

// payTool counts the payments it makes: the side effect that must happen
// exactly once.
func payTool(flags tool.Flags) *counter {
	return &counter{name: "pay", flags: flags, reply: func(string) (tool.Result, error) { return tool.Text("payment #42 done"), nil }}
}

func TestCrashBetweenExecutionAndCheckpointDoesNotRepeatTheSideEffect(t *testing.T) {
	checkNoLeak(t)
	path := filepath.Join(t.TempDir(), "run.state.json")
	pay := payTool(tool.Flags{})
	script := []scripted.Turn{calls(call("c-pay", "pay", `{"eur":10}`)), text("Paid.")}

	// First process: the payment runs, then the process "dies" before the
	// step's checkpoint is written.
	store, err := loop.OpenFileStore(path)
	if err != nil {
		t.Fatal(err)
	}
	a := &loop.Agent{Provider: scripted.New(script...), Tools: registry(t, pay)}
	store.Attach(a)
	saves := 0
	a.Checkpoint = func(ctx context.Context, st *loop.RunState) error {
		saves++
		if saves == 2 { // the checkpoint after the tools ran
			return errors.New("power cut")
		}
		return store.Checkpoint(ctx, st)
	}
	_, err = a.Run(context.Background(), "pay 10")
	if !errors.Is(err, loop.ErrCheckpoint) || pay.count() != 1 {
		t.Fatalf("first run: %v, paid %d", err, pay.count())
	}
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}

	// Second process: load the last checkpoint and resume.
	store, err = loop.OpenFileStore(path)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	st, err := store.Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(st.PendingTurn()) != 1 {
		t.Fatalf("the saved state should hold the unfinished turn, has %d pending calls", len(st.PendingTurn()))
	}
	p := scripted.New(script[1])
	b := &loop.Agent{Provider: p, Tools: registry(t, pay)}
	store.Attach(b)
	res, err := b.Resume(context.Background(), st)
	if err != nil {
		t.Fatal(err)
	}
	if pay.count() != 1 {
		t.Fatalf("the payment ran %d times", pay.count())
	}
	if r := toolResults(res.Messages)[0]; r.Content != "payment #42 done" || r.IsError {
		t.Fatalf("the model should see the recorded result, got %+v", r)
	}
	if res.Output != "Paid." {
		t.Errorf("output = %q", res.Output)
	}
	// The final state is on disk.
	final, err := store.Load()
	if err != nil || final.Status != loop.StopDone {
		t.Fatalf("final state: %+v, %v", final, err)
	}
}

// failingFinish is a journal whose "finished" records fail: the crash
// comes while the tool runs or right after, before its result is recorded.
type failingFinish struct{ loop.Journal }

func (f failingFinish) Record(ctx context.Context, e loop.JournalEntry) error {
	if e.Status == loop.JournalFinished {
		return errors.New("disk full")
	}
	return f.Journal.Record(ctx, e)
}

func TestUnknownOutcomeIsNotRetriedUnlessIdempotent(t *testing.T) {
	for _, idempotent := range []bool{false, true} {
		dir := t.TempDir()
		path := filepath.Join(dir, "state.json")
		pay := payTool(tool.Flags{Idempotent: idempotent})
		store, err := loop.OpenFileStore(path)
		if err != nil {
			t.Fatal(err)
		}
		a := &loop.Agent{Provider: scripted.New(calls(call("c", "pay", `{}`))), Tools: registry(t, pay), Checkpoint: store.Checkpoint, Journal: failingFinish{store.Journal()}}
		_, err = a.Run(context.Background(), "pay")
		if !errors.Is(err, loop.ErrJournal) || pay.count() != 1 {
			t.Fatalf("first run: %v, paid %d", err, pay.count())
		}
		store.Close()

		store, err = loop.OpenFileStore(path)
		if err != nil {
			t.Fatal(err)
		}
		r := resumeFirstResult(t, store, pay)
		if idempotent {
			if pay.count() != 2 || r.IsError {
				t.Errorf("idempotent tool: ran %d, result %+v", pay.count(), r)
			}
			continue
		}
		if pay.count() != 1 || !r.IsError || !strings.HasPrefix(r.Content, "OutcomeUnknown: `pay` was started before an interruption") {
			t.Errorf("non-idempotent tool: ran %d, result %+v", pay.count(), r)
		}
	}
}

func TestJournalStartFailureRunsNothing(t *testing.T) {
	pay := payTool(tool.Flags{})
	a := &loop.Agent{Provider: scripted.New(calls(call("c", "pay", `{}`))), Tools: registry(t, pay), Journal: brokenJournal{}}
	_, err := a.Run(context.Background(), "pay")
	var re *loop.RunError
	if !errors.Is(err, loop.ErrJournal) || !errors.As(err, &re) || pay.count() != 0 {
		t.Fatalf("err %v, paid %d", err, pay.count())
	}
	if len(re.State.PendingTurn()) != 1 {
		t.Error("the failed turn should stay pending in the state")
	}
}

type brokenJournal struct{}

func (brokenJournal) Record(context.Context, loop.JournalEntry) error {
	return errors.New("read-only fs")
}
func (brokenJournal) Lookup(context.Context, string, string) (loop.JournalEntry, bool, error) {
	return loop.JournalEntry{}, false, nil
}

func TestIdempotencyKeyIsStable(t *testing.T) {
	var keys []string
	k := &counter{name: "k", reply: func(string) (tool.Result, error) { return tool.Text("ok"), nil }}
	keyTool, _ := tool.NewFromSpec(k.Spec(), func(ctx context.Context, c tool.Call) (tool.Result, error) {
		info, ok := loop.CallInfoFrom(ctx)
		if !ok {
			return tool.Errorf("no call info"), nil
		}
		keys = append(keys, info.IdempotencyKey())
		return tool.Text("ok"), nil
	})
	pol := approvePolicy("k")
	p := scripted.New(calls(call("c9", "k", `{}`)), text("ok"))
	a := &loop.Agent{Provider: p, Tools: registry(t, keyTool), Checks: loop.Checks{Policy: pol}}
	_, err := a.Run(context.Background(), "go")
	var se *loop.StopError
	errors.As(err, &se)
	if _, err := a.Resume(context.Background(), se.State, loop.Approve("c9")); err != nil {
		t.Fatal(err)
	}
	if len(keys) != 1 || keys[0] != se.State.RunID+"/c9" {
		t.Fatalf("keys = %v (run %s)", keys, se.State.RunID)
	}
}

func TestFileJournalRecovery(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "j.jsonl")
	j, err := loop.OpenFileJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := loop.OpenFileJournal(path); !errors.Is(err, loop.ErrJournalLocked) {
		t.Fatalf("second open: %v", err)
	}
	ctx := context.Background()
	_ = j.Record(ctx, loop.JournalEntry{RunID: "r", CallID: "a", Status: loop.JournalStarted})
	_ = j.Record(ctx, loop.JournalEntry{RunID: "r", CallID: "a", Status: loop.JournalFinished, Content: "ok"})
	j.Close()
	// A crash mid-write leaves a torn last line: it is dropped.
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"run_id":"r","call_id":"b","stat`)
	f.Close()
	j, err = loop.OpenFileJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	if e, ok, _ := j.Lookup(ctx, "r", "a"); !ok || e.Status != loop.JournalFinished || e.Content != "ok" {
		t.Fatalf("entry a = %+v %v", e, ok)
	}
	if _, ok, _ := j.Lookup(ctx, "r", "b"); ok {
		t.Fatal("torn entry was read")
	}
	_ = j.Record(ctx, loop.JournalEntry{RunID: "r", CallID: "c", Status: loop.JournalStarted})
	j.Close()
	data, _ := os.ReadFile(path)
	if strings.Contains(string(data), `"stat{`) || strings.Count(string(data), "\n") != 3 {
		t.Fatalf("journal after recovery:\n%s", data)
	}
	// Damage in the middle is an error naming the line.
	os.WriteFile(path, append([]byte("garbage\n"), data...), 0o600)
	if _, err := loop.OpenFileJournal(path); err == nil || !strings.Contains(err.Error(), "line 1 is not a journal entry") {
		t.Fatalf("damaged journal: %v", err)
	}
}

func TestSaveAndLoadState(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.json")
	st := &loop.RunState{Version: loop.StateVersion, RunID: "r", Step: 2}
	if err := loop.SaveState(path, st); err != nil {
		t.Fatal(err)
	}
	got, err := loop.LoadState(path)
	if err != nil || got.RunID != "r" || got.Step != 2 {
		t.Fatalf("%+v %v", got, err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", fi.Mode().Perm())
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("temporary files left: %v", entries)
	}
	os.WriteFile(path, []byte(`{"version":1,`), 0o600)
	if _, err := loop.LoadState(path); !errors.Is(err, loop.ErrBadState) || !strings.Contains(err.Error(), path) {
		t.Errorf("corrupt state: %v", err)
	}
	if err := loop.SaveState(filepath.Join(dir, "missing", "s.json"), st); err == nil {
		t.Error("save into a missing directory succeeded")
	}
}

// cancelledTool runs until its context ends, then fails with the
// context's error, as a tool cut short by a cancelled run does.
type cancelledTool struct {
	flags   tool.Flags
	started chan struct{}
	runs    int
}

func (c *cancelledTool) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: "pay", Description: "pays", InputSchema: json.RawMessage(`{"type":"object"}`)}
}
func (c *cancelledTool) Flags() tool.Flags { return c.flags }
func (c *cancelledTool) Call(ctx context.Context, _ tool.Call) (tool.Result, error) {
	c.runs++
	if c.runs > 1 {
		return tool.Text("paid"), nil
	}
	close(c.started)
	<-ctx.Done()
	return tool.Result{}, ctx.Err()
}

// A call cut short by the run's cancellation has no outcome to keep: on
// resume it is not answered with the cancellation error but handled as
// any call started and not finished (run again when idempotent, reported
// as of unknown outcome otherwise).
func TestCancelledCallIsNotJournaledAsFinished(t *testing.T) {
	checkNoLeak(t)
	for _, idempotent := range []bool{false, true} {
		path := filepath.Join(t.TempDir(), "state.json")
		pay := &cancelledTool{flags: tool.Flags{Idempotent: idempotent}, started: make(chan struct{})}
		store, err := loop.OpenFileStore(path)
		if err != nil {
			t.Fatal(err)
		}
		a := &loop.Agent{Provider: scripted.New(calls(call("c", "pay", `{}`))), Tools: registry(t, pay)}
		store.Attach(a)
		ctx, cancel := context.WithCancel(context.Background())
		go func() { <-pay.started; cancel() }()
		if _, err := a.Run(ctx, "pay"); !errors.Is(err, context.Canceled) {
			t.Fatalf("first run: %v, want context.Canceled", err)
		}
		r := resumeFirstResult(t, store, pay)
		if strings.Contains(r.Content, "canceled") {
			t.Errorf("idempotent=%v: resume answered with the first run's cancellation: %+v", idempotent, r)
		}
		if idempotent {
			if pay.runs != 2 || r.IsError || r.Content != "paid" {
				t.Errorf("idempotent tool: ran %d times, result %+v; want it run again", pay.runs, r)
			}
			continue
		}
		if pay.runs != 1 || !r.IsError || !strings.HasPrefix(r.Content, "OutcomeUnknown:") {
			t.Errorf("non-idempotent tool: ran %d times, result %+v; want OutcomeUnknown", pay.runs, r)
		}
	}
}

// resumeFirstResult resumes the run saved in store with a model that
// answers "checked", closes the store, and returns the result of the
// resumed turn's first call.
func resumeFirstResult(t *testing.T, store *loop.FileStore, tools ...tool.Tool) llm.ToolResult {
	t.Helper()
	defer store.Close()
	st, err := store.Load()
	if err != nil {
		t.Fatal(err)
	}
	b := &loop.Agent{Provider: scripted.New(text("checked")), Tools: registry(t, tools...)}
	store.Attach(b)
	res, err := b.Resume(context.Background(), st)
	if err != nil {
		t.Fatal(err)
	}
	return toolResults(res.Messages)[0]
}
