package jsprogram_test

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
// its pool filled): the JavaScript runtime made, the program compiled and
// run (it returns at once, calling nothing), in a fresh instance.
//
//   - spaced: programs come as a model sends them, with time between
//     them for the host to refill its pool, so each gets an instance
//     made ahead of time (the timer is stopped in between);
//   - back-to-back: programs one after the other, faster than the pool
//     refills, so most pay for making their instance too.
//
// cpu-µs/op is the process's CPU time per program (every goroutine's),
// faults/op its minor page faults: an instance reset to the engine's
// snapshot keeps its memory resident, so a start faults no page in,
// spaced or not. What a spaced start adds is CPU time, not faults or
// waiting; a CPU profile of spaced starts is mostly the guest's machine
// code, which a pause of 1, 10 or 100 ms slows the more the longer it is
// (cold caches, measured under load).
func BenchmarkProgramStart(b *testing.B) {
	r := runner(b)
	ctx := context.Background()
	p := codemode.Program{Code: "return 1", Tools: []string{"get_order"}}
	run := func(b *testing.B) {
		res, err := r.Run(ctx, p)
		if err != nil || res.IsError {
			b.Fatal(err, res.Text())
		}
	}
	run(b)
	b.Run("spaced", func(b *testing.B) {
		var faults, cpu int64
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			time.Sleep(100 * time.Millisecond)
			f0, c0 := minorFaults(), cpuTime()
			b.StartTimer()
			run(b)
			b.StopTimer()
			faults += minorFaults() - f0
			cpu += cpuTime() - c0
			b.StartTimer()
		}
		b.ReportMetric(float64(cpu)/float64(b.N)/1000, "cpu-µs/op")
		b.ReportMetric(float64(faults)/float64(b.N), "faults/op")
	})
	b.Run("back-to-back", func(b *testing.B) {
		c0, f0 := cpuTime(), minorFaults()
		for b.Loop() {
			run(b)
		}
		b.ReportMetric(float64(cpuTime()-c0)/float64(b.N)/1000, "cpu-µs/op")
		b.ReportMetric(float64(minorFaults()-f0)/float64(b.N), "faults/op")
	})
}

// BenchmarkCall is the cost of one call of get_order, made directly by the
// model (n calls in one turn) or by a program (n calls in a loop), per
// call: each run's time less that of the same run making no call, over n.
// The difference of the two is the overhead of a nested call. cpu-µs/call
// is the same difference in the process's CPU time (every goroutine's,
// the collector's included), which a loaded machine stretches far less
// than wall time. As pyprogram's, it pauses between runs so each program
// finds an instance made ahead in the pool: a fresh instance's start,
// milliseconds that vary on a loaded machine, would otherwise swamp the
// calls' time.
func BenchmarkCall(b *testing.B) {
	// 400 calls: the calls' time then stands well above the noise of a
	// run's own.
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
		code := fmt.Sprintf("for (let id = 0; id < %d; id++) await tools.get_order({id}); return 1", k)
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
			var with, without, cpuWith, cpuWithout float64
			for b.Loop() {
				settle()
				t0, c0 := nanotime(), cpuTime()
				once(n)
				t1, c1 := nanotime(), cpuTime()
				settle()
				t2, c2 := nanotime(), cpuTime()
				once(0)
				t3, c3 := nanotime(), cpuTime()
				with += float64(t1 - t0)
				without += float64(t3 - t2)
				cpuWith += float64(c1 - c0)
				cpuWithout += float64(c3 - c2)
			}
			b.ReportMetric((with-without)/float64(b.N)/n/1000, "µs/call")
			b.ReportMetric((cpuWith-cpuWithout)/float64(b.N)/n/1000, "cpu-µs/call")
			b.ReportMetric(0, "ns/op") // the loop's time is mostly the pauses
		})
	}
}

func nanotime() int64 { return time.Now().UnixNano() }

// settle pauses between runs, for the host's pool to refill (the
// measured spans leave the pauses out).
func settle() { time.Sleep(100 * time.Millisecond) }
