package eval_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/autoagent-go/autoagent/eval"
	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/loop"
)

func benchCases(n int) ([]eval.Case, *answers) {
	p := &answers{byCase: map[string][]string{}}
	cases := make([]eval.Case, n)
	for i := range cases {
		id := fmt.Sprint("case-", i)
		p.byCase[id] = []string{"yes", "yes", "no"}
		cases[i] = yesCase(id)
	}
	return cases, p
}

// BenchmarkRunK1000x8 is RunK over 1000 cases × k = 8; BenchmarkRuns8000
// the same 8000 runs made directly: the difference is eval's overhead.
func BenchmarkRunK1000x8(b *testing.B) {
	cases, p := benchCases(1000)
	newAgent := func(context.Context, *eval.Case, int) (*loop.Agent, error) { return &loop.Agent{Provider: p}, nil }
	for b.Loop() {
		if _, err := eval.RunK(context.Background(), newAgent, cases, eval.Options{K: 8, Concurrency: 2}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRuns8000 makes the runs of BenchmarkRunK1000x8 without eval.
func BenchmarkRuns8000(b *testing.B) {
	cases, p := benchCases(1000)
	for b.Loop() {
		done := make(chan struct{}, 2)
		for w := range 2 {
			go func() {
				for i := w; i < len(cases); i += 2 {
					for range 8 {
						a := &loop.Agent{Provider: p}
						a.RunMessages(context.Background(), []llm.Message{llm.UserText(cases[i].Prompt)})
					}
				}
				done <- struct{}{}
			}()
		}
		<-done
		<-done
	}
}
