package policy_test

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/providers/scripted"
	"github.com/autoagent-go/autoagent/tool"
)

// call builds a tool call.
func call(id, name, args string) llm.ToolCall {
	return llm.ToolCall{ID: id, Name: name, Arguments: json.RawMessage(args)}
}

func calls(cs ...llm.ToolCall) scripted.Turn { return scripted.Turn{ToolCalls: cs} }

func text(s string) scripted.Turn { return scripted.Turn{Text: s} }

// counter is a tool that counts its executions: the side effect the
// tests assert on.
type counter struct {
	name string
	n    atomic.Int64
}

func (c *counter) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: c.name, Description: "test tool " + c.name, InputSchema: json.RawMessage(`{"type":"object"}`)}
}

func (c *counter) Call(context.Context, tool.Call) (tool.Result, error) {
	c.n.Add(1)
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
