package durable_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/testsuite"

	"github.com/autoagent-go/autoagent/codemode/jsprogram"
	"github.com/autoagent-go/autoagent/durable"
	"github.com/autoagent-go/autoagent/host"
	"github.com/autoagent-go/autoagent/internal/enginetest"
	"github.com/autoagent-go/autoagent/loop"
	"github.com/autoagent-go/autoagent/policy"
	"github.com/autoagent-go/autoagent/synth"
	"github.com/autoagent-go/autoagent/tool"
)

// orders is get_order (the refund of order id is 10 × id) and refund (an
// effect), counting their executions by id.
type orders struct {
	mu  sync.Mutex
	ran map[string]int
}

func (o *orders) count(what string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.ran == nil {
		o.ran = map[string]int{}
	}
	o.ran[what]++
}

func (o *orders) tools(t *testing.T) []tool.Tool {
	t.Helper()
	type in struct {
		ID int `json:"id"`
	}
	type order struct {
		ID     int `json:"id"`
		Refund int `json:"refund"`
	}
	get, err := tool.New("get_order", "Fetch an order.", func(_ context.Context, in in) (order, error) {
		o.count(fmt.Sprint("get_order ", in.ID))
		return order{ID: in.ID, Refund: 10 * in.ID}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	refund, err := tool.New("refund", "Refund an order.", func(_ context.Context, in in) (string, error) {
		o.count(fmt.Sprint("refund ", in.ID))
		return fmt.Sprint("refunded ", in.ID), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return []tool.Tool{get, refund}
}

// The real engine in a workflow: a JavaScript program of three calls, the
// refund awaiting approval. The worker runs the program in the sandboxed
// engine on the record of its calls; after the decision each call has run
// once, and the result is the local run's with the same engine.
func TestWorkflowCodeModeJavaScript(t *testing.T) {
	ctx := context.Background()
	h, err := host.New(ctx, host.Options{CallTool: loop.CallNested})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close(ctx) })
	programs, err := jsprogram.New(ctx, h, jsprogram.Options{Engine: enginetest.Path(t, synth.BridgeEngineFile), Progress: os.Stderr})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { programs.Close(ctx) })
	pol, err := policy.Parse([]byte(`{"version":1,"rules":[{"tool":"refund","action":"approve","reason":"money moves"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	const code = `const a = await tools.get_order({id: 1})
let refunded
try { refunded = await tools.refund({id: a.id + 1}) } catch (e) { refunded = "not yet: " + e.message }
const b = await tools.get_order({id: 3})
console.log("orders", a.id, b.id)
return {total: a.refund + b.refund, refunded}`

	var local orders
	la := programAgent(t, programs, code, local.tools(t)...)
	la.Checks.Policy = pol
	want := localRun(t, la, "run-js", loop.Approve("c1/2"))

	var remote orders
	agent := programAgent(t, programs, code, remote.tools(t)...)
	agent.Checks.Policy = pol
	e := env(t, &durable.Activities{Agent: agent})
	e.SetStartWorkflowOptions(startOptions("run-js"))
	var paused durable.Status
	e.RegisterDelayedCallback(func() {
		paused = queryState(t, e)
		e.UpdateWorkflow(durable.UpdateDecide, "u1", &testsuite.TestUpdateCallback{
			OnReject:   func(err error) { t.Errorf("the decision was refused: %v", err) },
			OnAccept:   func() {},
			OnComplete: func(any, error) {},
		}, []durable.Decision{{CallID: "c1/2", Approved: true}})
	}, time.Minute)
	e.ExecuteWorkflow(durable.WorkflowName, durable.WorkflowInput{RunInput: durable.RunInput{Prompt: "go"}})
	got := result(t, e)
	if len(paused.Pending) != 1 || paused.Pending[0].Call.ID != "c1/2" || string(paused.Pending[0].Call.Arguments) != `{"id":2}` {
		t.Fatalf("state while paused = %+v", paused)
	}
	if g, w := jsonOf(t, got), jsonOf(t, want); g != w {
		t.Errorf("the workflow's result differs from the local run's:\n got %s\nwant %s", g, w)
	}
	out := jsonOf(t, got.Messages)
	if !strings.Contains(out, `{\"result\":{\"total\":40,\"refunded\":\"refunded 2\"},\"console\":\"orders 1 3\"}`) {
		t.Errorf("the program's result: %s", out)
	}
	if fmt.Sprint(remote.ran) != "map[get_order 1:1 get_order 3:1 refund 2:1]" {
		t.Errorf("executions %v, want each call once", remote.ran)
	}
}

// BenchmarkCodeModeProgram is one durable run (the testsuite's workflow
// environment, no server) of a JavaScript program making n calls, which
// runs n+1 times on the worker, each run answering the calls before from
// the record: the cost of running a program as one activity per call
// (calls=N/local is the same program in a local run, run once).
func BenchmarkCodeModeProgram(b *testing.B) {
	ctx := context.Background()
	h, err := host.New(ctx, host.Options{CallTool: loop.CallNested})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { h.Close(ctx) })
	programs, err := jsprogram.New(ctx, h, jsprogram.Options{Engine: enginetest.Path(b, synth.BridgeEngineFile)})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { programs.Close(ctx) })
	for _, n := range []int{1, 10, 50, 200} {
		b.Run(fmt.Sprintf("calls=%d", n), func(b *testing.B) {
			code := fmt.Sprintf("let s = 0\nfor (let i = 0; i < %d; i++) s += (await tools.get_order({id: i})).refund\nreturn s", n)
			var o orders
			t := &testing.T{}
			agent := programAgent(t, programs, code, o.tools(t)...)
			for b.Loop() {
				var s testsuite.WorkflowTestSuite
				s.SetLogger(quiet)
				e := s.NewTestWorkflowEnvironment()
				durable.Register(e, &durable.Activities{Agent: agent})
				e.ExecuteWorkflow(durable.WorkflowName, durable.WorkflowInput{RunInput: durable.RunInput{Prompt: "go"}})
				if err := e.GetWorkflowError(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n+1), "program-runs/op")
		})
		b.Run(fmt.Sprintf("calls=%d/local", n), func(b *testing.B) {
			code := fmt.Sprintf("let s = 0\nfor (let i = 0; i < %d; i++) s += (await tools.get_order({id: i})).refund\nreturn s", n)
			var o orders
			t := &testing.T{}
			for b.Loop() {
				if _, err := programAgent(t, programs, code, o.tools(t)...).Run(ctx, "go"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
