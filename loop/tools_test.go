package loop_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"unicode/utf8"

	"github.com/autoagent-go/autoagent/internal/marker"
	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/loop"
	"github.com/autoagent-go/autoagent/providers/scripted"
	"github.com/autoagent-go/autoagent/tool"
	"github.com/autoagent-go/autoagent/trace"
)

// gated is a tool whose calls block until released, finishing in the
// order the test chooses.
type gated struct {
	gates    map[string]chan struct{}
	running  atomic.Int32
	peak     atomic.Int32
	started  chan string
	finished chan string // optional: receives the id of each call that completed
}

func (g *gated) Spec() llm.ToolSpec { return llm.ToolSpec{Name: "slow", Description: "slow"} }

func (g *gated) Call(ctx context.Context, c tool.Call) (tool.Result, error) {
	n := g.running.Add(1)
	defer g.running.Add(-1)
	for {
		p := g.peak.Load()
		if n <= p || g.peak.CompareAndSwap(p, n) {
			break
		}
	}
	g.started <- c.ID
	select {
	case <-g.gates[c.ID]:
		if g.finished != nil {
			g.finished <- c.ID
		}
		return tool.Text("result of " + c.ID), nil
	case <-ctx.Done():
		return tool.Errorf("interrupted: %v", ctx.Err()), nil
	}
}

func TestParallelCallsKeepTranscriptOrder(t *testing.T) {
	checkNoLeak(t)
	ids := []string{"a", "b", "c", "d", "e"}
	g := &gated{gates: map[string]chan struct{}{}, started: make(chan string, len(ids))}
	var cs []llm.ToolCall
	for _, id := range ids {
		g.gates[id] = make(chan struct{})
		cs = append(cs, call(id, "slow", `{}`))
	}
	p := scripted.New(calls(cs...), text("done"))
	a := &loop.Agent{Provider: p, Tools: registry(t, g), MaxParallelTools: 3}
	done := make(chan struct{})
	var res *loop.Result
	var err error
	go func() {
		defer close(done)
		res, err = a.Run(context.Background(), "go")
	}()
	// The first three start (the bound); release them last-started first,
	// then the remaining two likewise, so completion order is scrambled.
	first := []string{<-g.started, <-g.started, <-g.started}
	for i := 2; i >= 0; i-- {
		close(g.gates[first[i]])
	}
	rest := []string{<-g.started, <-g.started}
	close(g.gates[rest[1]])
	close(g.gates[rest[0]])
	<-done
	if err != nil {
		t.Fatal(err)
	}
	if peak := g.peak.Load(); peak != 3 {
		t.Errorf("peak concurrency %d, want the bound 3", peak)
	}
	var got []string
	for _, r := range toolResults(res.Messages) {
		got = append(got, r.CallID+"="+r.Content)
	}
	want := []string{"a=result of a", "b=result of b", "c=result of c", "d=result of d", "e=result of e"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("transcript order %v, want %v", got, want)
	}
}

func TestDefaultParallelismIsEight(t *testing.T) {
	checkNoLeak(t)
	g := &gated{gates: map[string]chan struct{}{}, started: make(chan string, 10)}
	var cs []llm.ToolCall
	for i := range 10 {
		id := fmt.Sprint("c", i)
		g.gates[id] = make(chan struct{})
		cs = append(cs, call(id, "slow", `{}`))
	}
	a := &loop.Agent{Provider: scripted.New(calls(cs...), text("done")), Tools: registry(t, g)}
	done := make(chan error)
	go func() {
		_, err := a.Run(context.Background(), "go")
		done <- err
	}()
	// Eight calls start and block; only then is any released, so the peak
	// is the bound exactly. With a larger bound the other two calls are
	// already on their way in: yielding lets them arrive (it only makes a
	// wrong bound likelier to show; a correct one passes whatever runs).
	for range 8 {
		<-g.started
	}
	for range 100 {
		runtime.Gosched()
	}
	for _, gate := range g.gates {
		close(gate)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if peak := g.peak.Load(); peak != 8 {
		t.Fatalf("peak concurrency %d, want the default bound 8", peak)
	}
}

func TestSequentialWhenMaxParallelIsOne(t *testing.T) {
	c := &counter{name: "t"}
	var running, peak atomic.Int32
	c.reply = func(string) (tool.Result, error) {
		n := running.Add(1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		// Stay inside the call a while: were the calls started at once,
		// the others would arrive meanwhile and raise the peak.
		for range 100 {
			runtime.Gosched()
		}
		running.Add(-1)
		return tool.Text("ok"), nil
	}
	p := scripted.New(calls(call("1", "t", `{"i":1}`), call("2", "t", `{"i":2}`), call("3", "t", `{"i":3}`)), text("ok"))
	a := &loop.Agent{Provider: p, Tools: registry(t, c), MaxParallelTools: 1}
	// Each call ends before the next starts (calls run at once announce
	// every start first, then the ends).
	var events []string
	for ev, err := range a.Stream(context.Background(), "go") {
		if err != nil {
			t.Fatal(err)
		}
		switch ev.Type {
		case loop.EventToolStart:
			events = append(events, "start:"+ev.Call.ID)
		case loop.EventToolEnd:
			events = append(events, "end:"+ev.Call.ID)
		}
	}
	if got := strings.Join(events, " "); got != "start:1 end:1 start:2 end:2 start:3 end:3" {
		t.Errorf("events %s", got)
	}
	if c.count() != 3 || peak.Load() != 1 || strings.Join(c.args, "") != `{"i":1}{"i":2}{"i":3}` {
		t.Fatalf("count %d peak %d args %v", c.count(), peak.Load(), c.args)
	}
}

func TestTruncationNeverExceedsTheBound(t *testing.T) {
	for _, bound := range []int{1, 50, 150, 151, 200, 1000, 4096} {
		for _, size := range []int{10, 151, 999, 1000, 1001, 5000, 123456} {
			body := strings.Repeat("é", size/2) + strings.Repeat("x", size-size/2)
			c := &counter{name: "big", reply: func(string) (tool.Result, error) { return tool.Text(body), nil }}
			p := scripted.New(calls(call("", "big", `{}`)), text("ok"))
			a := &loop.Agent{Provider: p, Tools: registry(t, c), Bounds: loop.Bounds{MaxToolResultChars: bound}}
			if _, err := a.Run(context.Background(), "go"); err != nil {
				t.Fatal(err)
			}
			got := resultsSent(p.Requests()[1])[0].Content
			n := utf8.RuneCountInString(got)
			if n > bound {
				t.Fatalf("bound %d, body %d: result has %d characters", bound, size, n)
			}
			if !utf8.ValidString(got) {
				t.Fatalf("bound %d, body %d: invalid UTF-8", bound, size)
			}
			if size <= bound {
				if got != body {
					t.Fatalf("bound %d, body %d: a result within the bound was changed", bound, size)
				}
				continue
			}
			if strings.Contains(got, "[TRUNCATED — ") {
				marker := fmt.Sprintf("of %d characters omitted", size)
				if !strings.Contains(got, marker) {
					t.Fatalf("bound %d, body %d: marker lacks %q: %q", bound, size, marker, got)
				}
				omitted := size - (n - markerLen(got))
				if !strings.Contains(got, fmt.Sprintf("— %d of", omitted)) {
					t.Fatalf("bound %d, body %d: marker does not say %d were omitted: %q", bound, size, omitted, got)
				}
				if !strings.HasPrefix(got, "é") || !strings.HasSuffix(got, "x") {
					t.Fatalf("head or tail lost: %q", got)
				}
			} else if bound > 150 {
				t.Fatalf("bound %d, body %d: no marker", bound, size)
			} else if n != bound || !strings.HasPrefix(body, got) {
				// Too small a bound for the marker: a hard cut keeps the
				// first bound characters.
				t.Fatalf("bound %d, body %d: hard cut kept %d characters, not the body's first %d: %q", bound, size, n, bound, got)
			}
		}
	}
}

func TestUntrustedResultIsBoundedThenFramed(t *testing.T) {
	const bound = 300
	body := strings.Repeat("page ", 1000)
	web := &counter{name: "fetch", flags: tool.Flags{Untrusted: true}, reply: func(string) (tool.Result, error) { return tool.Text(body), nil }}
	p := scripted.New(calls(call("", "fetch", `{}`)), text("ok"))
	a := &loop.Agent{Provider: p, Tools: registry(t, web), Bounds: loop.Bounds{MaxToolResultChars: bound}}
	if _, err := a.Run(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	got := resultsSent(p.Requests()[1])[0].Content
	inner, ok := strings.CutPrefix(got, marker.UntrustedOpen+"\n")
	inner, ok2 := strings.CutSuffix(inner, "\n"+marker.UntrustedClose)
	if !ok || !ok2 || utf8.RuneCountInString(inner) != bound || !strings.Contains(inner, "[TRUNCATED — ") {
		t.Fatalf("want the whole frame around %d bounded characters, got %q", bound, got)
	}
}

// markerLen returns the length in characters of the truncation marker in s.
func markerLen(s string) int {
	i := strings.Index(s, "\n[TRUNCATED — ")
	j := strings.Index(s, "one portion at a time.]\n")
	return utf8.RuneCountInString(s[i : j+len("one portion at a time.]\n")])
}

func TestLoopGuardRefusesTheNPlusFirstIdenticalCall(t *testing.T) {
	c := &counter{name: "search"}
	same := func() scripted.Turn { return calls(call("", "search", `{"q":"go","page":1}`)) }
	p := scripted.New(same(), calls(call("", "search", `{ "page":1, "q":"go" }`)), same(), calls(call("", "search", `{"q":"rust"}`)), text("ok"))
	var buf bytes.Buffer
	a := &loop.Agent{Provider: p, Tools: registry(t, c), Bounds: loop.Bounds{MaxRepeatedToolCalls: 2}, Tracer: trace.New(familyJSONL(&buf))}
	res, err := a.Run(context.Background(), "go")
	if err != nil {
		t.Fatal(err)
	}
	if c.count() != 3 {
		t.Fatalf("tool ran %d times, want 3 (2 identical + 1 different)", c.count())
	}
	rs := toolResults(res.Messages)
	if rs[2].IsError != true || !strings.HasPrefix(rs[2].Content, "RepeatedCall: you already called `search` with these exact arguments 2 times") {
		t.Fatalf("third identical call result = %+v", rs[2])
	}
	if rs[0].IsError || rs[1].IsError || rs[3].IsError {
		t.Fatalf("other calls refused: %+v", rs)
	}
	// The model saw the refusal.
	if got := resultsSent(p.Requests()[3])[2].Content; !strings.HasPrefix(got, "RepeatedCall: ") {
		t.Errorf("model was sent %q", got)
	}
	sum, _ := trace.Summarize(&buf)
	if sum.Refusals["loop_guard_block"] != 1 {
		t.Errorf("refusals traced: %v", sum.Refusals)
	}
}

func TestToolFailureTiers(t *testing.T) {
	var buf bytes.Buffer
	broken := &counter{name: "broken", reply: func(string) (tool.Result, error) { return tool.Result{}, errors.New("sandbox crashed") }}
	failing := &counter{name: "failing", reply: func(string) (tool.Result, error) { return tool.Errorf("no such city"), nil }}
	panicking := &counter{name: "panicking", reply: func(string) (tool.Result, error) { panic("bug") }}
	p := scripted.New(calls(call("1", "broken", `{}`), call("2", "failing", `{}`), call("3", "panicking", `{}`), call("4", "nope", `{}`), call("5", "echo", `{"txt":1}`)), text("ok"))
	a := &loop.Agent{Provider: p, Tools: registry(t, broken, failing, panicking, echo(t)), Tracer: trace.New(familyJSONL(&buf))}
	res, err := a.Run(context.Background(), "go")
	if err != nil {
		t.Fatal(err)
	}
	rs := toolResults(res.Messages)
	for i, want := range []string{"tool broken failed: sandbox crashed", "no such city", "tool panicking panicked: bug", `unknown tool: "nope"`, "invalid arguments: "} {
		if !rs[i].IsError || !strings.Contains(rs[i].Content, want) {
			t.Errorf("result %d = %+v, want an error containing %q", i, rs[i], want)
		}
	}
	sum, _ := trace.Summarize(&buf)
	if sum.ToolErrors != 5 || sum.InfraErrors != 1 {
		t.Errorf("trace: %d errors, %d infrastructure (want 5, 1)", sum.ToolErrors, sum.InfraErrors)
	}
}

func TestPruningChangesOnlyTheView(t *testing.T) {
	long := strings.Repeat("data ", 200)
	c := &counter{name: "read", reply: func(string) (tool.Result, error) { return tool.Text(long), nil }}
	var turns []scripted.Turn
	for i := range 5 {
		turns = append(turns, calls(call("", "read", fmt.Sprintf(`{"i":%d}`, i))))
	}
	p := scripted.New(append(turns, text("ok"))...)
	var buf bytes.Buffer
	a := &loop.Agent{Provider: p, Tools: registry(t, c), Bounds: loop.Bounds{MaxSteps: 10, PruneToolResultsAfter: 2, PruneBatch: 2}, Tracer: trace.New(familyJSONL(&buf))}
	res, err := a.Run(context.Background(), "go")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range toolResults(res.Messages) {
		if r.Content != long {
			t.Fatal("the transcript was pruned")
		}
	}
	pruned := func(req *llm.Request) int {
		n := 0
		for _, r := range resultsSent(req) {
			if strings.HasPrefix(r.Content, "[PRUNED — the 1000-character result of `read`") {
				n++
			}
		}
		return n
	}
	// Results sent at calls 1..6: 0,1,2,3,4,5; keep 2, batch 2 → 0,0,0,0,2,2.
	var got []int
	for _, req := range p.Requests() {
		got = append(got, pruned(req))
	}
	if fmt.Sprint(got) != "[0 0 0 0 2 2]" {
		t.Fatalf("pruned per request = %v", got)
	}
	sum, _ := trace.Summarize(&buf)
	if sum.PrunedChars == 0 {
		t.Error("pruning not traced")
	}
}

func TestCancellationStopsEverythingAndResumes(t *testing.T) {
	checkNoLeak(t)
	g := &gated{gates: map[string]chan struct{}{"a": make(chan struct{}), "b": make(chan struct{})}, started: make(chan string, 2), finished: make(chan string, 2)}
	p := scripted.New(calls(call("a", "slow", `{}`), call("b", "slow", `{}`)), text("after resume"))
	a := &loop.Agent{Provider: p, Tools: registry(t, g)}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-g.started
		<-g.started
		close(g.gates["a"]) // a completes, b is interrupted
		<-g.finished
		cancel()
	}()
	res, err := a.Run(ctx, "go")
	if !errors.Is(err, loop.ErrCancelled) || !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	if res.StopReason != loop.StopCancelled {
		t.Fatalf("result = %+v", res)
	}
	st := res.State
	if len(st.PendingTurn()) != 2 || len(st.Completed) != 1 || st.Completed[0].CallID != "a" {
		t.Fatalf("state: pending %v completed %+v", st.PendingTurn(), st.Completed)
	}
	// Resume runs only b.
	g.gates["b"] = make(chan struct{})
	close(g.gates["b"])
	g.gates["a"] = nil // a second run of a would block forever
	res, err = a.Resume(context.Background(), st)
	if err != nil {
		t.Fatal(err)
	}
	rs := toolResults(res.Messages)
	if len(rs) != 2 || rs[0].Content != "result of a" || rs[1].Content != "result of b" || res.Output != "after resume" {
		t.Fatalf("resumed results %+v output %q", rs, res.Output)
	}
}

func TestCancelledBeforeStartDoesNotCallTheModel(t *testing.T) {
	p := scripted.New(text("never"))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := (&loop.Agent{Provider: p}).Run(ctx, "go")
	if !errors.Is(err, loop.ErrCancelled) || res.StopReason != loop.StopCancelled || p.Calls() != 0 {
		t.Fatalf("res %+v err %v calls %d", res, err, p.Calls())
	}
}

func TestBreakingOutOfStreamStopsEverything(t *testing.T) {
	checkNoLeak(t)
	g := &gated{gates: map[string]chan struct{}{"a": make(chan struct{}), "b": make(chan struct{})}, started: make(chan string, 2)}
	p := scripted.NewWithOptions(scripted.Options{ChunkSize: 1},
		scripted.Turn{Text: "working on it", ToolCalls: []llm.ToolCall{call("a", "slow", `{}`), call("b", "slow", `{}`)}},
		text("never reached"))
	a := &loop.Agent{Provider: p, Tools: registry(t, g)}

	// Break during the text deltas.
	n := 0
	for ev, err := range a.Stream(context.Background(), "go") {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == loop.EventText {
			n++
			if n == 3 {
				break
			}
		}
	}
	if n != 3 || g.running.Load() != 0 {
		t.Fatalf("deltas %d, running tools %d", n, g.running.Load())
	}

	// Break at the first tool start: no tool may run afterwards.
	p.Reset()
	for ev := range a.Stream(context.Background(), "go") {
		if ev.Type == loop.EventToolStart {
			break
		}
	}
	if g.running.Load() != 0 || len(g.started) != 0 {
		t.Fatal("a tool started after the consumer stopped")
	}
}

func TestBreakingOutOfStreamMakesNoFurtherCalls(t *testing.T) {
	checkNoLeak(t)
	g := &gated{gates: map[string]chan struct{}{"x": make(chan struct{})}, started: make(chan string, 1)}
	c := &counter{name: "quick"}
	p := scripted.New(calls(call("q", "quick", `{}`)), calls(call("x", "slow", `{}`)), text("never"))
	a := &loop.Agent{Provider: p, Tools: registry(t, g, c)}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for ev := range a.Stream(ctx, "go") {
		if ev.Type == loop.EventToolEnd && ev.Call.ID == "q" {
			break
		}
	}
	if g.running.Load() != 0 || p.Calls() != 1 {
		t.Fatalf("running %d, model calls %d", g.running.Load(), p.Calls())
	}
}
