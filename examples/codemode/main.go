// Command codemode runs one task twice — with plain tool calling and in
// code mode — and prints a table from the two runs' traces: model round
// trips, bytes of the requests sent to the model, tool calls, wall time.
//
//	go run ./examples/codemode
//
// The task: total the refunds over the twelve orders of a customer,
// fetched one by one (list_orders, then get_order per order). The model is
// scripted (offline, no key) and plays two ways of doing it:
//
//   - plain: it calls list_orders, then get_order once per step, as a
//     model does when it reads each result before the next call, then
//     answers (14 round trips). A model that asks for the twelve calls at
//     once in one step is shown too (3 round trips);
//   - code mode (codemode.Only): it writes one program that lists the
//     orders, fetches each and sums the refunds, then answers (2 round
//     trips).
//
// Every call of the program passes the same gate as a direct call (here,
// a policy that lets the reads through); the three answers are the same.
// The request bytes are the JSON of each request as the loop hands it to
// the provider (messages, tool specs and, in code mode, run_program's
// declarations); the wall time is the run's own work and the sandbox's,
// with the scripted model answering at once. The same program in Python,
// in a run offering both languages, is shown too. Needs the JavaScript
// engine and the Python one (`make synth-engine python-engine`, which
// `make demo` runs).
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"strings"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/autoagent-go/autoagent/codemode"
	"github.com/autoagent-go/autoagent/codemode/jsprogram"
	"github.com/autoagent-go/autoagent/codemode/pyprogram"
	"github.com/autoagent-go/autoagent/host"
	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/loop"
	"github.com/autoagent-go/autoagent/providers/scripted"
	"github.com/autoagent-go/autoagent/tool"
	"github.com/autoagent-go/autoagent/trace"
)

// orders is the customer's orders: ids 101 to 112, each refunding id/4
// euros and some cents.
var orders = func() []int {
	var ids []int
	for id := 101; id <= 112; id++ {
		ids = append(ids, id)
	}
	return ids
}()

type order struct {
	ID       int     `json:"id"`
	Customer string  `json:"customer"`
	Status   string  `json:"status"`
	Items    []item  `json:"items"`
	Refund   float64 `json:"refund" jsonschema:"the amount refunded, in euros"`
	Note     string  `json:"note"`
}

type item struct {
	SKU   string  `json:"sku"`
	Name  string  `json:"name"`
	Price float64 `json:"price"`
}

func lookup(id int) order {
	return order{
		ID: id, Customer: "ada", Status: "refunded",
		Items: []item{
			{SKU: fmt.Sprintf("SKU-%d-A", id), Name: "Espresso cups, set of four", Price: 24.5},
			{SKU: fmt.Sprintf("SKU-%d-B", id), Name: "Milk jug, stainless steel", Price: 18},
		},
		Refund: float64(id)/4 + 0.25,
		Note:   "Refunded after the customer reported a broken item in transit; carrier claim filed.",
	}
}

// expected is the answer: the sum of the refunds.
func expected() float64 {
	total := 0.0
	for _, id := range orders {
		total += lookup(id).Refund
	}
	return total
}

// shop makes the task's tools, counting their calls.
func shop(calls *atomic.Int32) (*tool.Registry, error) {
	list, err := tool.New("list_orders", "List the ids of a customer's orders.", func(_ context.Context, in struct {
		Customer string `json:"customer" jsonschema:"the customer's name"`
	}) (struct {
		IDs []int `json:"ids"`
	}, error) {
		calls.Add(1)
		return struct {
			IDs []int `json:"ids"`
		}{orders}, nil
	})
	if err != nil {
		return nil, err
	}
	get, err := tool.New("get_order", "Fetch one order by id: its items, status, refund and notes.", func(_ context.Context, in struct {
		ID int `json:"id" jsonschema:"the order's id"`
	}) (order, error) {
		calls.Add(1)
		return lookup(in.ID), nil
	})
	if err != nil {
		return nil, err
	}
	return tool.NewRegistry(tool.WithFlags(list, tool.Flags{Idempotent: true}), tool.WithFlags(get, tool.Flags{Idempotent: true}))
}

func args(v any) json.RawMessage { b, _ := json.Marshal(v); return b }

func answer() scripted.Turn {
	return scripted.Turn{Text: fmt.Sprintf("The refunds of ada's 12 orders total %.2f euros.", expected())}
}

// sequential is a model reading each result before its next call.
func sequential() []scripted.Turn {
	turns := []scripted.Turn{{ToolCalls: []llm.ToolCall{{ID: "l", Name: "list_orders", Arguments: args(map[string]string{"customer": "ada"})}}}}
	for _, id := range orders {
		turns = append(turns, scripted.Turn{ToolCalls: []llm.ToolCall{{ID: fmt.Sprintf("o%d", id), Name: "get_order", Arguments: args(map[string]int{"id": id})}}})
	}
	return append(turns, answer())
}

// parallel is a model asking for every order in one step.
func parallel() []scripted.Turn {
	var gets []llm.ToolCall
	for _, id := range orders {
		gets = append(gets, llm.ToolCall{ID: fmt.Sprintf("o%d", id), Name: "get_order", Arguments: args(map[string]int{"id": id})})
	}
	return []scripted.Turn{
		{ToolCalls: []llm.ToolCall{{ID: "l", Name: "list_orders", Arguments: args(map[string]string{"customer": "ada"})}}},
		{ToolCalls: gets},
		answer(),
	}
}

// program is the code-mode model's one program.
const program = `const {ids} = await tools.list_orders({customer: "ada"})
let total = 0
for (const id of ids) {
  const o = await tools.get_order({id})
  total += o.refund
}
return {orders: ids.length, total: Math.round(total * 100) / 100}`

func programmed() []scripted.Turn {
	return []scripted.Turn{
		{ToolCalls: []llm.ToolCall{{ID: "p", Name: codemode.ToolName, Arguments: args(codemode.Input{Code: program})}}},
		answer(),
	}
}

// pyProgram is the same program in Python, for a run offering both
// languages.
const pyProgram = `ids = tools.list_orders(customer="ada")["ids"]
total = 0
for id in ids:
    total += tools.get_order(id=id)["refund"]
return {"orders": len(ids), "total": round(total, 2)}`

func pyProgrammed() []scripted.Turn {
	return []scripted.Turn{
		{ToolCalls: []llm.ToolCall{{ID: "p", Name: codemode.ToolName, Arguments: args(codemode.Input{Code: pyProgram, Language: codemode.Python})}}},
		answer(),
	}
}

// measured counts the bytes of the requests it passes on.
type measured struct {
	llm.Provider
	bytes atomic.Int64
}

func (m *measured) Complete(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	b, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	m.bytes.Add(int64(len(b)))
	return m.Provider.Complete(ctx, req)
}

func (m *measured) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.StreamEvent, error] {
	panic("the example does not stream")
}

// row is one run's line of the table.
type row struct {
	name       string
	roundTrips int
	reqBytes   int64
	toolCalls  int
	wall       time.Duration
	answer     string
	ran        int32
}

func run(ctx context.Context, name string, turns []scripted.Turn, cm codemode.Config) (row, error) {
	var calls atomic.Int32
	tools, err := shop(&calls)
	if err != nil {
		return row{}, err
	}
	var events bytes.Buffer
	model := &measured{Provider: scripted.New(turns...)}
	a := &loop.Agent{
		Provider: model, Tools: tools, CodeMode: cm, Tracer: trace.New(trace.JSONL(&events)),
		Bounds: loop.Bounds{MaxSteps: 20},
		Checks: loop.Checks{Policy: loop.PolicyFunc(func(context.Context, *loop.PolicyInput) (loop.Decision, error) {
			return loop.Decision{Verdict: loop.VerdictAllow}, nil
		})},
	}
	start := time.Now()
	res, err := a.Run(ctx, "What do ada's refunds total?")
	wall := time.Since(start)
	if err != nil {
		return row{}, fmt.Errorf("%s: %w", name, err)
	}
	s, err := trace.Summarize(&events)
	if err != nil {
		return row{}, err
	}
	// Tool calls the tools answered: the program's own call is the gate's
	// (it counts in the run's tool calls) but fetches nothing.
	toolCalls := s.ToolCalls - s.Programs
	return row{name: name, roundTrips: s.LLMCalls, reqBytes: model.bytes.Load(), toolCalls: toolCalls, wall: wall, answer: res.Output, ran: calls.Load()}, nil
}

func main() {
	if err := demo(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "codemode:", err)
		if errors.Is(err, jsprogram.ErrNoEngine) {
			fmt.Fprintln(os.Stderr, "codemode: build the engine with `make synth-engine` first")
		}
		if errors.Is(err, pyprogram.ErrNoEngine) {
			fmt.Fprintln(os.Stderr, "codemode: build the Python engine with `make python-engine` first")
		}
		os.Exit(1)
	}
}

// demo runs the three ways and prints the table; it fails when code mode
// misses its targets (5× fewer round trips and 60 % fewer request bytes
// than plain sequential tool calling) or an answer differs.
func demo(ctx context.Context, w io.Writer) error {
	h, err := host.New(ctx, host.Options{CallTool: loop.CallNested})
	if err != nil {
		return err
	}
	defer h.Close(ctx)
	programs, err := jsprogram.New(ctx, h, jsprogram.Options{Progress: os.Stderr})
	if err != nil {
		return err
	}
	defer programs.Close(ctx)
	py, err := pyprogram.New(ctx, h, pyprogram.Options{Progress: os.Stderr})
	if err != nil {
		return err
	}
	defer py.Close(ctx)
	both := codemode.ByLanguage{codemode.JavaScript: programs, codemode.Python: py}
	// One program first, so the table's wall time is a warm engine's; then
	// the time a model's turn takes at least, in which the host makes the
	// next program's instance ahead of it, as it does between turns.
	if _, err := run(ctx, "warm-up", programmed(), codemode.Config{Mode: codemode.Only, Runner: programs}); err != nil {
		return err
	}
	if _, err := run(ctx, "warm-up", pyProgrammed(), codemode.Config{Mode: codemode.Only, Runner: both}); err != nil {
		return err
	}
	time.Sleep(300 * time.Millisecond)
	var rows []row
	for _, c := range []struct {
		name  string
		turns []scripted.Turn
		cm    codemode.Config
	}{
		{"plain, one call per step", sequential(), codemode.Config{}},
		{"plain, calls batched", parallel(), codemode.Config{}},
		{"code mode (only)", programmed(), codemode.Config{Mode: codemode.Only, Runner: programs}},
		{"code mode, Python (both offered)", pyProgrammed(), codemode.Config{Mode: codemode.Only, Runner: both}},
	} {
		r, err := run(ctx, c.name, c.turns, c.cm)
		if err != nil {
			return err
		}
		rows = append(rows, r)
	}
	fmt.Fprintf(w, "Task: total the refunds of 12 orders fetched one by one (answer %.2f euros).\n\n", expected())
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "run\tmodel round trips\trequest bytes\ttool calls\twall time\t")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%.1f ms\t\n", r.name, r.roundTrips, r.reqBytes, r.toolCalls, float64(r.wall.Microseconds())/1000)
	}
	tw.Flush()
	plain, code := rows[0], rows[2]
	fewer := float64(plain.roundTrips) / float64(code.roundTrips)
	saved := 1 - float64(code.reqBytes)/float64(plain.reqBytes)
	fmt.Fprintf(w, "\ncode mode against plain tool calling (one call per step): %.1f× fewer round trips, %.0f %% fewer request bytes\n", fewer, 100*saved)
	fmt.Fprintf(w, "against batched calls: %.1f× fewer round trips, %.0f %% fewer request bytes\n",
		float64(rows[1].roundTrips)/float64(code.roundTrips), 100*(1-float64(code.reqBytes)/float64(rows[1].reqBytes)))
	for _, r := range rows {
		if r.answer != rows[0].answer || r.ran != 13 {
			return fmt.Errorf("%s: answered %q after %d tool calls; want %q after 13", r.name, r.answer, r.ran, rows[0].answer)
		}
	}
	for _, code := range rows[2:] {
		fewer := float64(plain.roundTrips) / float64(code.roundTrips)
		saved := 1 - float64(code.reqBytes)/float64(plain.reqBytes)
		if fewer < 5 || saved < 0.6 {
			return fmt.Errorf("%s missed code mode's targets: %.1f× fewer round trips (want ≥ 5), %.0f %% fewer request bytes (want ≥ 60)", code.name, fewer, 100*saved)
		}
	}
	fmt.Fprintln(w, "the same answer each way:", strings.TrimSpace(code.answer))
	return nil
}
