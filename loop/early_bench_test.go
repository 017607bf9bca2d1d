package loop_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/loop"
	"github.com/autoagent-go/autoagent/providers/scripted"
	"github.com/autoagent-go/autoagent/tool"
)

// BenchmarkEarlyToolStart measures one streamed turn whose model keeps
// streaming for 20 ms after it announced a call to an idempotent tool that
// takes 20 ms, then answers: about 40 ms with the tool run after the
// stream, about 20 ms when it starts early.
func BenchmarkEarlyToolStart(b *testing.B) {
	const streamTail, toolTime = 20 * time.Millisecond, 20 * time.Millisecond
	for _, tc := range []struct {
		name     string
		maxEarly int
	}{{"early=off", -1}, {"early=on", 0}} {
		b.Run(tc.name, func(b *testing.B) {
			lookup := &probe{name: "lookup", flags: idempotent, call: func(ctx context.Context, _ string) (tool.Result, error) {
				select {
				case <-time.After(toolTime):
				case <-ctx.Done():
					return tool.Result{}, ctx.Err()
				}
				return tool.Text("42"), nil
			}}
			reg := registry(b, lookup)
			for b.Loop() {
				p := &pausing{Provider: scripted.New(calls(call("c1", "lookup", `{"q":"x"}`)), text("it is 42")),
					pause: func(ctx context.Context, _ llm.ToolCall) error {
						select {
						case <-time.After(streamTail):
							return nil
						case <-ctx.Done():
							return ctx.Err()
						}
					}}
				a := &loop.Agent{Provider: p, Tools: reg, MaxEarlyTools: tc.maxEarly}
				if _, err := drain(a.Stream(context.Background(), "go")); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkEarlyToolStartOverhead is the streamed loop step with an
// idempotent no-op tool, early starts on and off: the cost of the early
// path itself when there is nothing to overlap.
func BenchmarkEarlyToolStartOverhead(b *testing.B) {
	for _, maxEarly := range []int{-1, 0} {
		b.Run(fmt.Sprintf("MaxEarlyTools=%d", maxEarly), func(b *testing.B) {
			reg := registry(b, tool.WithFlags(nopTool{}, idempotent))
			p := scripted.NewWithOptions(scripted.Options{PerConversation: true}, stepScript(9)...)
			a := &loop.Agent{Provider: p, Tools: reg, MaxEarlyTools: maxEarly, Bounds: loop.Bounds{MaxSteps: 10}}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := drain(a.Stream(context.Background(), "go")); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
