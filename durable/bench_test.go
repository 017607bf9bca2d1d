package durable_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"go.temporal.io/api/serviceerror"

	"github.com/autoagent-go/autoagent/durable"
	"github.com/autoagent-go/autoagent/host"
	"github.com/autoagent-go/autoagent/internal/temporaltest"
	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/loop"
	"github.com/autoagent-go/autoagent/tool"
)

// benchSteps is the steps of a benchmark run: one sandboxed tool call per
// step, then the answer.
const benchSteps = 5

// echoModel calls the echo tool benchSteps times, then answers; stateless
// (it reads the step off the request), so any worker and any run share it.
type echoModel struct{}

func (echoModel) Complete(_ context.Context, req *llm.Request) (*llm.Response, error) {
	step := 0
	for _, m := range req.Messages {
		if m.Role == llm.RoleAssistant {
			step++
		}
	}
	u := &llm.Usage{InputTokens: 50, OutputTokens: 5}
	if step >= benchSteps {
		return &llm.Response{Message: llm.AssistantText("done"), Usage: u, FinishReason: llm.FinishStop}, nil
	}
	call := &llm.ToolCall{ID: fmt.Sprintf("c%d", step), Name: "echo", Arguments: json.RawMessage(fmt.Sprintf(`{"step":%d}`, step))}
	return &llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{{Type: llm.PartToolCall, ToolCall: call}}}, Usage: u, FinishReason: llm.FinishToolCalls}, nil
}

func (m echoModel) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.StreamEvent, error] {
	return llm.StreamFromComplete(ctx, req, m.Complete)
}

// echoAgent is an agent whose one tool is the sandboxed echo module.
func echoAgent(b *testing.B) *loop.Agent {
	b.Helper()
	ctx := context.Background()
	h, err := host.New(ctx, host.Options{NoDiskCache: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { h.Close(ctx) })
	wasm, err := os.ReadFile("../testdata/wasm/echo.wasm")
	if err != nil {
		b.Fatal(err)
	}
	mod, err := h.Load(ctx, host.Module{Name: "echo", Bytes: wasm})
	if err != nil {
		b.Fatal(err)
	}
	echo, _ := mod.Tool("echo")
	reg, err := tool.NewRegistry(echo)
	if err != nil {
		b.Fatal(err)
	}
	return &loop.Agent{Provider: echoModel{}, Tools: reg, Bounds: loop.Bounds{MaxSteps: benchSteps + 2}}
}

// BenchmarkDurableRuns runs N runs at once on the Temporal dev server (one
// in-process worker) and, in the same benchmark, the same N runs with the
// in-process loop: runs per second, p50 and p99 run latency for both, and
// the overhead per step of the durable run over the local one at p50.
// "N=100" runs with the default options (each model call an activity),
// "N=100,LocalModelCalls" with model calls local activities.
// DURABLE_BENCH_N picks one N.
//
//	go test ./durable -run '^$' -bench DurableRuns -benchtime 1x
func BenchmarkDurableRuns(b *testing.B) {
	srv := temporaltest.StartInMemory(b)
	c, err := dialB(srv)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	agent := echoAgent(b)
	w := durable.NewWorker(c, "bench", &durable.Activities{Agent: agent})
	if err := w.Start(); err != nil {
		b.Fatal(err)
	}
	defer w.Stop()
	dc := &durable.Client{Temporal: c, TaskQueue: "bench"}
	sizes := []int{10, 100, 1000}
	if s := os.Getenv("DURABLE_BENCH_N"); s != "" {
		var n int
		fmt.Sscan(s, &n)
		sizes = []int{n}
	}
	for _, n := range sizes {
		for _, opts := range []durable.Options{{}, {LocalModelCalls: true}} {
			name := fmt.Sprintf("N=%d", n)
			if opts.LocalModelCalls {
				name += ",LocalModelCalls"
			}
			b.Run(name, func(b *testing.B) { benchRuns(b, agent, dc, n, opts) })
		}
	}
}

// benchRuns measures n durable runs at once with opts, and n local ones.
func benchRuns(b *testing.B, agent *loop.Agent, dc *durable.Client, n int, opts durable.Options) {
	for i := 0; b.Loop(); i++ {
		local := measure(b, n, func(ctx context.Context, _ int) error {
			res, err := agent.Run(ctx, "echo")
			if err == nil && res.Steps != benchSteps+1 {
				err = fmt.Errorf("local run: %d steps", res.Steps)
			}
			return err
		})
		durableRuns := measure(b, n, func(ctx context.Context, j int) error {
			id, err := startRun(ctx, dc, fmt.Sprintf("bench-%d-%v-%d-%d", n, opts.LocalModelCalls, i, j), opts)
			if err != nil {
				return err
			}
			res, err := dc.Result(ctx, id)
			if err == nil && res.Steps != benchSteps+1 {
				err = fmt.Errorf("durable run: %d steps", res.Steps)
			}
			return err
		})
		b.ReportMetric(durableRuns.perSecond, "runs/s")
		b.ReportMetric(durableRuns.p50.Seconds()*1e3, "p50-ms")
		b.ReportMetric(durableRuns.p99.Seconds()*1e3, "p99-ms")
		b.ReportMetric(local.perSecond, "local-runs/s")
		b.ReportMetric(local.p50.Seconds()*1e3, "local-p50-ms")
		b.ReportMetric(local.p99.Seconds()*1e3, "local-p99-ms")
		b.ReportMetric((durableRuns.p50-local.p50).Seconds()*1e3/float64(benchSteps+1), "overhead-ms/step")
	}
}

// startRun starts a run, again when the server took longer to answer
// than the SDK's deadline for one request (10 s; a thousand starts on a
// loaded machine pass it): the ID is the run's, so a start the server
// had taken comes back as already started.
func startRun(ctx context.Context, dc *durable.Client, id string, opts durable.Options) (string, error) {
	for attempt := 1; ; attempt++ {
		_, err := dc.Start(ctx, id, durable.RunInput{Prompt: "echo"}, opts)
		var started *serviceerror.WorkflowExecutionAlreadyStarted
		var late *serviceerror.DeadlineExceeded
		switch {
		case err == nil || attempt > 1 && errors.As(err, &started):
			return id, nil
		case attempt < 5 && ctx.Err() == nil && (errors.As(err, &late) || errors.Is(err, context.DeadlineExceeded)):
			continue
		}
		return "", err
	}
}

type measured struct {
	perSecond float64
	p50, p99  time.Duration
}

// measure runs n runs at once and reports their throughput and latency.
func measure(b *testing.B, n int, run func(context.Context, int) error) measured {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	lat := make([]time.Duration, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := time.Now()
	for j := range n {
		wg.Go(func() {
			t0 := time.Now()
			errs[j] = run(ctx, j)
			lat[j] = time.Since(t0)
		})
	}
	wg.Wait()
	total := time.Since(start)
	for _, err := range errs {
		if err != nil {
			b.Fatal(err)
		}
	}
	slices.Sort(lat)
	return measured{perSecond: float64(n) / total.Seconds(), p50: lat[n/2], p99: lat[min(n-1, n*99/100)]}
}
