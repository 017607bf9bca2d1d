package pyprogram_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/autoagent-go/autoagent/codemode"
	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/loop"
	"github.com/autoagent-go/autoagent/providers/scripted"
)

// BenchmarkProgramStart is a program's start on a warm engine (compiled,
// its pool filled): Python started in the instance ahead of the call, the program compiled and
// run (it returns at once, calling nothing), in a fresh instance.
//
//   - spaced: programs come as a model sends them, with time between
//     them for the host to refill its pool, so each gets an instance
//     made ahead of time (the timer is stopped in between);
//   - back-to-back: programs one after the other, faster than the pool
//     refills, so most pay for making their instance too.
func BenchmarkProgramStart(b *testing.B) {
	r := runner(b)
	ctx := context.Background()
	p := codemode.Program{Code: "return 1", Language: codemode.Python, Tools: []string{"get_order"}}
	run := func(b *testing.B) {
		res, err := r.Run(ctx, p)
		if err != nil || res.IsError {
			b.Fatal(err, res.Text())
		}
	}
	run(b)
	b.Run("spaced", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			time.Sleep(100 * time.Millisecond)
			b.StartTimer()
			run(b)
		}
	})
	b.Run("back-to-back", func(b *testing.B) {
		c0 := cpuTime()
		for b.Loop() {
			run(b)
		}
		b.ReportMetric(float64(cpuTime()-c0)/float64(b.N)/1000, "cpu-µs/op")
	})
}

// BenchmarkCall is the cost of one call of get_order, made directly by the
// model (n calls in one turn) or by a program (n calls in a loop), per
// call: each run's time less that of the same run making no call, over n.
// The difference of the two is the overhead of a nested call. Unlike
// jsprogram's, it pauses between runs so each program finds an instance
// with Python started in the pool.
func BenchmarkCall(b *testing.B) {
	// 400 calls: the calls' time then stands well above the noise of a
	// run's own (a program's start varies by milliseconds on a loaded
	// machine).
	const n = 400
	s := &shop{}
	direct := func(k int) []scripted.Turn {
		var calls []llm.ToolCall
		for i := range k {
			calls = append(calls, llm.ToolCall{ID: fmt.Sprintf("c%d", i), Name: "get_order", Arguments: []byte(fmt.Sprintf(`{"id":%d}`, i))})
		}
		if k == 0 {
			return []scripted.Turn{{Text: "done"}}
		}
		return []scripted.Turn{{ToolCalls: calls}, {Text: "done"}}
	}
	nested := func(k int) []scripted.Turn {
		code := fmt.Sprintf("for id in range(%d):\n    tools.get_order(id=id)\nreturn 1", k)
		return []scripted.Turn{{ToolCalls: []llm.ToolCall{programCall("p", code)}}, {Text: "done"}}
	}
	for _, c := range []struct {
		name  string
		turns func(int) []scripted.Turn
		mode  codemode.Mode
	}{{"direct", direct, codemode.Off}, {"nested", nested, codemode.Only}} {
		b.Run(c.name, func(b *testing.B) {
			a := &loop.Agent{Tools: s.registry(b), MaxParallelTools: 1, Bounds: loop.Bounds{MaxSteps: 4},
				CodeMode: codemode.Config{Mode: c.mode, Runner: runner(b), MaxCalls: n}}
			ctx := context.Background()
			once := func(k int) {
				a.Provider = scripted.New(c.turns(k)...)
				res, err := a.Run(ctx, "go")
				if err != nil || !strings.Contains(res.Output, "done") {
					b.Fatal(err)
				}
			}
			var with, without float64
			for b.Loop() {
				// Time for the pool to refill between programs, as
				// between a model's steps: each program then gets an
				// instance with Python started, and the difference
				// is the calls' (a fresh instance's start, tens of
				// ms, would otherwise swamp it).
				settle()
				t0 := nanotime()
				once(n)
				t1 := nanotime()
				settle()
				t2 := nanotime()
				once(0)
				t3 := nanotime()
				with += float64(t1 - t0)
				without += float64(t3 - t2)
			}
			b.ReportMetric((with-without)/float64(b.N)/n/1000, "µs/call")
			b.ReportMetric(0, "ns/op") // the loop's time is mostly the pauses
		})
	}
}

func nanotime() int64 { return time.Now().UnixNano() }

// settle pauses with the benchmark's timer stopped.
func settle() { time.Sleep(100 * time.Millisecond) }
