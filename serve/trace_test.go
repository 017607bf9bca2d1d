package serve_test

import (
	"net/http"
	"slices"
	"sync"
	"testing"

	"github.com/autoagent-go/autoagent/providers/scripted"
	"github.com/autoagent-go/autoagent/serve"
	"github.com/autoagent-go/autoagent/trace"
)

// traceOf reads GET /v1/runs/{id}/trace: the event types, each event's
// run id, and the summary.
func traceOf(t *testing.T, e *env, id string) (types []string, runIDs map[any]bool, sum map[string]any) {
	t.Helper()
	r := e.must(http.StatusOK, "GET", "/v1/runs/"+id+"/trace", "")
	evs, ok := r.body["events"].([]any)
	sum, ok2 := r.body["summary"].(map[string]any)
	if !ok || !ok2 {
		t.Fatalf("trace: want {\"events\": [...], \"summary\": {...}}, got %.500s", r.raw)
	}
	runIDs = map[any]bool{}
	for _, ev := range evs {
		m := ev.(map[string]any)
		types = append(types, m["type"].(string))
		runIDs[m["run_id"]] = true
	}
	return types, runIDs, sum
}

// A run's trace holds its model and tool calls and its approval, under
// the run's id, and the summary counts them; it survives a restart.
func TestRunTraceAndSummary(t *testing.T) {
	for _, withDir := range []bool{true, false} {
		t.Run(map[bool]string{true: "dir", false: "memory"}[withDir], func(t *testing.T) {
			var dir string
			if withDir {
				dir = t.TempDir()
			}
			model := scriptOf(call("echo", `{"text":"hi"}`), scripted.Turn{Text: "said hi"})
			// The agent's own tracer still receives every event.
			var mu sync.Mutex
			var own []trace.Event
			g := newGate()
			agent := newAgent(t, model, g)
			agent.Tracer = trace.New(trace.SinkFunc(func(ev trace.Event) {
				mu.Lock()
				own = append(own, ev)
				mu.Unlock()
			}))
			e := newEnv(t, serve.Options{Dir: dir, Agent: agent}, nil)
			id := e.start("say hi")
			run := e.waitStatus(id, serve.StatusAwaitingApproval)
			types, _, sum := traceOf(t, e, id)
			if !slices.Contains(types, "approval_required") || sum["approvals"] != 1.0 {
				t.Fatalf("paused run's trace: %v, summary %v", types, sum)
			}
			e.must(http.StatusAccepted, "POST", "/v1/runs/"+id+"/decisions", decisions(pendingIDs(run)[0], true, "fine"))
			e.waitStatus(id, serve.StatusCompleted)

			types, runIDs, sum := traceOf(t, e, id)
			for _, want := range []string{"run_start", "llm_request", "llm_response", "approval_required", "approval_decision", "tool_call_start", "tool_call_end", "run_end"} {
				if !slices.Contains(types, want) {
					t.Fatalf("trace %v: no %s", types, want)
				}
			}
			if len(runIDs) != 1 || !runIDs[id] {
				t.Fatalf("the trace's run ids %v, want only %s", runIDs, id)
			}
			if sum["tool_calls"] != 1.0 || sum["llm_calls"] != 2.0 || sum["runs_by_status"].(map[string]any)["ok"] != 1.0 || sum["events"] != float64(len(types)) {
				t.Fatalf("summary: %v (events %v)", sum, types)
			}
			mu.Lock()
			n := len(own)
			mu.Unlock()
			if n != len(types) {
				t.Fatalf("the agent's tracer got %d events, the run's trace %d", n, len(types))
			}
			if !withDir {
				return
			}
			e.srv.Close()
			again := newEnv(t, serve.Options{Dir: dir}, model)
			after, _, sum2 := traceOf(t, again, id)
			if !slices.Equal(after, types) || sum2["tool_calls"] != 1.0 {
				t.Fatalf("after a restart: %v %v, want %v", after, sum2, types)
			}
		})
	}
}

// The trace is bounded like the events: the last MaxEvents, the others
// counted as dropped.
func TestRunTraceBounded(t *testing.T) {
	model := scriptOf(call("shout", `{"text":"a"}`), call("shout", `{"text":"b"}`), call("shout", `{"text":"c"}`), scripted.Turn{Text: "done"})
	for _, dir := range []string{"", t.TempDir()} {
		e := newEnv(t, serve.Options{MaxEvents: 3, Dir: dir}, model)
		r := e.must(http.StatusOK, "POST", "/v1/runs", `{"prompt": "x"}`)
		id := r.body["id"].(string)
		tr := e.must(http.StatusOK, "GET", "/v1/runs/"+id+"/trace", "")
		evs := tr.body["events"].([]any)
		if len(evs) != 3 || tr.body["dropped"].(float64) < 10 || evs[2].(map[string]any)["type"] != "run_end" {
			t.Fatalf("dir %q: %d events, dropped %v, last %v", dir, len(evs), tr.body["dropped"], evs[len(evs)-1])
		}
	}
}

func TestRunTraceOfAnUnknownRun(t *testing.T) {
	e := newEnv(t, serve.Options{}, scriptOf(scripted.Turn{Text: "x"}))
	for _, id := range []string{"run_000000000000000000000000", "run_%2e%2e", "nope"} {
		r := e.must(http.StatusNotFound, "GET", "/v1/runs/"+id+"/trace", "")
		if r.body["error"].(map[string]any)["code"] != "unknown_run" {
			t.Fatalf("%s: %s", id, r.raw)
		}
	}
}
