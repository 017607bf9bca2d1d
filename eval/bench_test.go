//go:build unix

package eval_test

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"syscall"
	"testing"

	"github.com/autoagent-go/autoagent/eval"
	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/loop"
	"github.com/autoagent-go/autoagent/providers/scripted"
)

// benchCases is n cases, each answered by a fresh scripted provider per
// run (as NewAgent asks: nothing carried over), which says "yes" as the
// case expects, or, with failing set, "no" on the runs where
// (case + run) % 3 == 2: a third of all runs.
func benchCases(n int, failing bool) ([]eval.Case, eval.NewAgent) {
	cases := make([]eval.Case, n)
	index := make(map[string]int, n)
	for i := range cases {
		cases[i] = yesCase(fmt.Sprint("case-", i))
		index[cases[i].ID] = i
	}
	newAgent := func(_ context.Context, c *eval.Case, run int) (*loop.Agent, error) {
		answer := "yes"
		if failing && (index[c.ID]+run)%3 == 2 {
			answer = "no"
		}
		return &loop.Agent{Provider: scripted.New(scripted.Turn{Text: answer,
			Usage: &llm.Usage{InputTokens: 10, OutputTokens: 5}})}, nil
	}
	return cases, newAgent
}

// suites are the benchmarks' two suites: every run passing, and a third
// failing (whose report then explains 2667 failures, a reason and a
// timeline each).
var suites = []struct {
	name    string
	failing bool
}{{"passing", false}, {"third-failing", true}}

// BenchmarkRunK1000x8 is RunK over 1000 cases × k = 8; BenchmarkRuns8000
// the same 8000 runs made directly, with the same agents: the difference
// is eval's overhead. Measured figures: README, Performance.
func BenchmarkRunK1000x8(b *testing.B) {
	for _, s := range suites {
		b.Run(s.name, func(b *testing.B) {
			cases, newAgent := benchCases(1000, s.failing)
			runtime.GC() // what came before is collected now, not while timed
			defer cpuPerOp(b)()
			var rep *eval.Report
			for b.Loop() {
				var err error
				if rep, err = eval.RunK(context.Background(), newAgent, cases, eval.Options{K: 8, Concurrency: 2}); err != nil {
					b.Fatal(err)
				}
			}
			if want := map[bool]float64{false: 1, true: 2. / 3}[s.failing]; math.Abs(rep.PassAt1-want) > 0.01 {
				b.Fatalf("pass@1 %.3f, want %.3f", rep.PassAt1, want)
			}
		})
	}
}

// BenchmarkRuns8000 makes the runs of BenchmarkRunK1000x8 without eval.
func BenchmarkRuns8000(b *testing.B) {
	for _, s := range suites {
		b.Run(s.name, func(b *testing.B) {
			cases, newAgent := benchCases(1000, s.failing)
			runtime.GC()
			defer cpuPerOp(b)()
			ctx := context.Background()
			for b.Loop() {
				done := make(chan struct{}, 2)
				for w := range 2 {
					go func() {
						for i := w; i < len(cases); i += 2 {
							for r := range 8 {
								a, _ := newAgent(ctx, &cases[i], r)
								a.Run(ctx, cases[i].Prompt) // as RunK runs a case without prior messages
							}
						}
						done <- struct{}{}
					}()
				}
				<-done
				<-done
			}
		})
	}
}

// cpuPerOp reports the process's CPU time (user and system) per op as
// cpu-ns/op: on a shared machine the wall time also counts the time other
// tenants took, the CPU time only this benchmark's work.
func cpuPerOp(b *testing.B) func() {
	start := cpuNow()
	return func() { b.ReportMetric(float64(cpuNow()-start)/float64(b.N), "cpu-ns/op") }
}

func cpuNow() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
