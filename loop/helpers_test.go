package loop_test

import (
	"context"
	"encoding/json"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/providers/scripted"
	"github.com/autoagent-go/autoagent/tool"
)

// goroutines returns the stacks of the live goroutines, by goroutine id.
func goroutines() map[string]string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	out := map[string]string{}
	for _, g := range strings.Split(string(buf), "\n\n") {
		header, _, _ := strings.Cut(g, "\n")
		id := strings.Fields(header)
		if len(id) >= 2 {
			out[id[1]] = g
		}
	}
	return out
}

// checkNoLeak fails the test if goroutines started after it was called are
// still alive once the test body ends. It waits briefly for goroutines that
// are finishing (a deferred wg.Done between Run returning and the scheduler
// reaping): that is waiting, not timing, and a true leak never ends.
func checkNoLeak(t *testing.T) {
	t.Helper()
	before := goroutines()
	t.Cleanup(func() {
		var leaked []string
		for range 200 {
			leaked = leaked[:0]
			for id, stack := range goroutines() {
				if _, ok := before[id]; ok || strings.Contains(stack, "testing.tRunner") || strings.Contains(stack, "testing.(*T).Run") {
					continue
				}
				leaked = append(leaked, stack)
			}
			if len(leaked) == 0 {
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
		t.Errorf("%d goroutine(s) outlived the run:\n\n%s", len(leaked), strings.Join(leaked, "\n\n"))
	})
}

// call builds a tool call.
func call(id, name, args string) llm.ToolCall {
	return llm.ToolCall{ID: id, Name: name, Arguments: json.RawMessage(args)}
}

func calls(cs ...llm.ToolCall) scripted.Turn { return scripted.Turn{ToolCalls: cs} }

func text(s string) scripted.Turn { return scripted.Turn{Text: s} }

func usage(in, out int64) *llm.Usage { return &llm.Usage{InputTokens: in, OutputTokens: out} }

// echoIn is the input of the echo tool.
type echoIn struct {
	Text string `json:"text"`
}

// counter is a tool that counts its executions: the side effect tests
// assert on.
type counter struct {
	name  string
	flags tool.Flags
	n     atomic.Int64
	mu    sync.Mutex
	args  []string
	reply func(args string) (tool.Result, error)
}

func (c *counter) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: c.name, Description: "test tool " + c.name, InputSchema: json.RawMessage(`{"type":"object"}`)}
}

func (c *counter) Flags() tool.Flags { return c.flags }

func (c *counter) Call(_ context.Context, call tool.Call) (tool.Result, error) {
	c.n.Add(1)
	c.mu.Lock()
	c.args = append(c.args, string(call.Arguments))
	c.mu.Unlock()
	if c.reply != nil {
		return c.reply(string(call.Arguments))
	}
	return tool.Text(c.name + " ok"), nil
}

func (c *counter) count() int { return int(c.n.Load()) }

func registry(t testing.TB, tools ...tool.Tool) *tool.Registry {
	t.Helper()
	reg, err := tool.NewRegistry(tools...)
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// echo returns a tool.New tool that echoes its text.
func echo(t *testing.T) tool.Tool {
	t.Helper()
	e, err := tool.New("echo", "Echo the text.", func(_ context.Context, in echoIn) (string, error) { return "echo: " + in.Text, nil })
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// toolResults returns the tool results of msgs, in order.
func toolResults(msgs []llm.Message) []llm.ToolResult {
	var out []llm.ToolResult
	for _, m := range msgs {
		out = append(out, m.ToolResults()...)
	}
	return out
}

// resultsSent returns the tool results sent to the model in a request.
func resultsSent(req *llm.Request) []llm.ToolResult { return toolResults(req.Messages) }
