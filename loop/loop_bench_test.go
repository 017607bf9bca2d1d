package loop_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/loop"
	"github.com/autoagent-go/autoagent/providers/scripted"
	"github.com/autoagent-go/autoagent/tool"
	"github.com/autoagent-go/autoagent/trace"
)

// nopTool is the trivial tool of the loop-overhead benchmark: it does no
// work, so what is measured is the loop.
type nopTool struct{}

var nopResult = tool.Text("ok")

func (nopTool) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: "nop", Description: "does nothing", InputSchema: json.RawMessage(`{"type":"object"}`)}
}
func (nopTool) Call(context.Context, tool.Call) (tool.Result, error) { return nopResult, nil }

// stepScript returns a script of steps-1 turns calling nop once each, then
// a final answer.
func stepScript(steps int) []scripted.Turn {
	turns := make([]scripted.Turn, 0, steps)
	for i := 1; i < steps; i++ {
		turns = append(turns, scripted.Turn{
			ToolCalls: []llm.ToolCall{{ID: fmt.Sprintf("call_%d", i), Name: "nop", Arguments: json.RawMessage(`{"i":1}`)}},
			Usage:     &llm.Usage{InputTokens: 100, OutputTokens: 10},
		})
	}
	return append(turns, scripted.Turn{Text: "done", Usage: &llm.Usage{InputTokens: 100, OutputTokens: 10}})
}

// benchSteps runs b.N runs of `steps` steps each and reports ns/step.
func benchSteps(b *testing.B, tl tool.Tool, tr *trace.Tracer, configure ...func(*loop.Agent)) {
	const steps = 16
	p := scripted.New(stepScript(steps)...)
	reg, _ := tool.NewRegistry(tl)
	a := &loop.Agent{Provider: p, Tools: reg, Bounds: loop.Bounds{MaxSteps: steps}, Tracer: tr}
	for _, c := range configure {
		c(a)
	}
	ctx := context.Background()
	b.ReportAllocs()
	cpu0 := cpuTime()
	b.ResetTimer()
	for range b.N {
		p.Reset()
		res, err := a.Run(ctx, "go")
		if err != nil || res.Steps != steps {
			b.Fatalf("run: %v (%+v)", err, res)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*steps), "ns/step")
	// CPU time is what the process spent, GC included: unlike wall time it
	// does not grow when other processes share the machine.
	if cpu := cpuTime() - cpu0; cpu > 0 {
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N*steps), "cpu-ns/step")
	}
}

// BenchmarkLoopStep measures the loop's overhead per step: scripted model,
// one trivial tool call per step, no network, tracing off.
func BenchmarkLoopStep(b *testing.B) { benchSteps(b, nopTool{}, nil) }

// BenchmarkLoopStepTraced is the same with tracing on (JSONL, discarded).
func BenchmarkLoopStepTraced(b *testing.B) {
	benchSteps(b, nopTool{}, trace.New(trace.JSONL(io.Discard)))
}

// BenchmarkLoopStepHooks is BenchmarkLoopStep with two pre-tool hooks
// (one reads the arguments, one allows) and two post-tool hooks (one
// rewrites the text) on every call.
func BenchmarkLoopStepHooks(b *testing.B) {
	benchSteps(b, nopTool{}, nil, func(a *loop.Agent) {
		a.Checks.PreToolHooks = []loop.PreToolHook{
			func(_ context.Context, c *loop.HookCall) (loop.HookDecision, error) {
				if bytes.Contains(c.Call.Arguments, []byte("forbidden")) {
					return loop.HookDecision{Deny: "no"}, nil
				}
				return loop.HookDecision{}, nil
			},
			func(context.Context, *loop.HookCall) (loop.HookDecision, error) { return loop.HookDecision{}, nil },
		}
		a.Checks.PostToolHooks = []loop.PostToolHook{
			func(_ context.Context, _ llm.ToolCall, r *loop.HookResult) error {
				r.Content = strings.ReplaceAll(r.Content, "secret", "[redacted]")
				return nil
			},
			func(context.Context, llm.ToolCall, *loop.HookResult) error { return nil },
		}
	})
}

// BenchmarkLoopStepGuarded is BenchmarkLoopStepHooks with two guardrails
// on every tool result and answer (secrets and PII, the built-ins that
// scan text): the measure of per-step overhead.
func BenchmarkLoopStepGuarded(b *testing.B) {
	benchSteps(b, nopTool{}, nil, func(a *loop.Agent) {
		a.Checks.PreToolHooks = []loop.PreToolHook{
			func(context.Context, *loop.HookCall) (loop.HookDecision, error) { return loop.HookDecision{}, nil },
			func(context.Context, *loop.HookCall) (loop.HookDecision, error) { return loop.HookDecision{}, nil },
		}
		a.Checks.PostToolHooks = []loop.PostToolHook{
			func(context.Context, llm.ToolCall, *loop.HookResult) error { return nil },
			func(context.Context, llm.ToolCall, *loop.HookResult) error { return nil },
		}
		guards := []loop.Guardrail{loop.SecretsGuardrail(false), loop.PIIGuardrail(false)}
		a.Checks.ToolResultGuardrails, a.Checks.OutputGuardrails = guards, guards
	})
}

// BenchmarkLoopStepSchemaTool uses a tool.New tool, whose arguments are
// validated against its JSON schema on every call.
func BenchmarkLoopStepSchemaTool(b *testing.B) {
	type in struct {
		I int `json:"i"`
	}
	tl, err := tool.New("nop", "does nothing", func(context.Context, in) (string, error) { return "ok", nil })
	if err != nil {
		b.Fatal(err)
	}
	benchSteps(b, tl, nil)
}

// barrierTool blocks each call until `want` calls are in progress at once,
// which proves that many runs are really concurrent.
type barrierTool struct {
	want    int64
	arrived atomic.Int64
	once    sync.Once
	all     chan struct{}
}

func newBarrier(n int) *barrierTool { return &barrierTool{want: int64(n), all: make(chan struct{})} }

func (t *barrierTool) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: "wait", Description: "waits for the others", InputSchema: json.RawMessage(`{"type":"object"}`)}
}

func (t *barrierTool) Call(ctx context.Context, _ tool.Call) (tool.Result, error) {
	if t.arrived.Add(1) == t.want {
		t.once.Do(func() { close(t.all) })
	}
	select {
	case <-t.all:
		return tool.Text("together"), nil
	case <-ctx.Done():
		return tool.Errorf("%v", ctx.Err()), nil
	}
}

// concurrentRuns runs n runs of one agent at once, all inside a tool call
// at the same moment, and returns how many finished correctly.
func concurrentRuns(n int) (int64, error) {
	p := scripted.NewWithOptions(scripted.Options{PerConversation: true},
		scripted.Turn{ToolCalls: []llm.ToolCall{{Name: "wait", Arguments: json.RawMessage(`{}`)}}, Usage: &llm.Usage{InputTokens: 5, OutputTokens: 1}},
		scripted.Turn{Text: "done", Usage: &llm.Usage{InputTokens: 7, OutputTokens: 1}},
	)
	reg, err := tool.NewRegistry(newBarrier(n))
	if err != nil {
		return 0, err
	}
	a := &loop.Agent{Provider: p, Tools: reg}
	var ok atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 1)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := a.Run(context.Background(), "go")
			if err == nil && res.Output == "done" && res.Usage.TotalTokens == 14 {
				ok.Add(1)
				return
			}
			select {
			case errs <- fmt.Errorf("run failed: %v (%+v)", err, res):
			default:
			}
		}()
	}
	wg.Wait()
	select {
	case err := <-errs:
		return ok.Load(), err
	default:
		return ok.Load(), nil
	}
}

// BenchmarkConcurrentRuns runs 10 000 runs at once per iteration; every
// run is inside its tool call at the same moment.
func BenchmarkConcurrentRuns(b *testing.B) {
	const n = 10000
	b.ReportAllocs()
	for range b.N {
		done, err := concurrentRuns(n)
		if err != nil || done != n {
			b.Fatalf("%d of %d runs finished: %v", done, n, err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/run")
}

func TestTenThousandConcurrentRuns(t *testing.T) {
	checkNoLeak(t)
	done, err := concurrentRuns(10000)
	if err != nil || done != 10000 {
		t.Fatalf("%d of 10000 runs finished: %v", done, err)
	}
}

// BenchmarkAnswerStructured is a one-step run whose answer is validated
// against an output schema; BenchmarkAnswerPlain the same run without: the
// difference is the validation's cost per answer.
func BenchmarkAnswerStructured(b *testing.B) { benchAnswer(b, personOutputSchema) }

// BenchmarkAnswerPlain is BenchmarkAnswerStructured without a schema.
func BenchmarkAnswerPlain(b *testing.B) { benchAnswer(b, nil) }

var personOutputSchema = json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"},"age":{"type":"integer"},"city":{"type":"string"}},"required":["name","age","city"],"additionalProperties":false}`)

func benchAnswer(b *testing.B, schema json.RawMessage) {
	p := scripted.New(scripted.Turn{Text: `{"name":"Alice","age":30,"city":"Paris"}`})
	a := &loop.Agent{Provider: p, Structured: loop.StructuredOutput{Schema: schema}}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		p.Reset()
		if _, err := a.Run(ctx, "Alice"); err != nil {
			b.Fatal(err)
		}
	}
}
