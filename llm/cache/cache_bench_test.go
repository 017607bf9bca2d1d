package cache_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/llm/cache"
	"github.com/autoagent-go/autoagent/providers/scripted"
)

// benchRequest is a 20-message conversation with tool calls and
// results, and three tools: what a run sends by its tenth step.
func benchRequest() *llm.Request {
	req := &llm.Request{Model: "m", Messages: []llm.Message{llm.SystemText("You are an AI agent with tools. Use tools when they are useful."), llm.UserText("Find the orders of customer 42 and sum them.")}}
	for i := range 9 {
		id := fmt.Sprint("call_", i)
		req.Messages = append(req.Messages,
			llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{llm.TextPart("Looking it up."), llm.ToolCallPart(llm.ToolCall{ID: id, Name: "lookup", Arguments: json.RawMessage(`{"customer":42,"page":` + fmt.Sprint(i) + `}`)})}},
			llm.ToolResultMessage(llm.ToolResult{CallID: id, Name: "lookup", Content: `{"orders":[{"id":1,"total":12.5},{"id":2,"total":7.25}],"next":true}`}))
	}
	schema := json.RawMessage(`{"type":"object","properties":{"customer":{"type":"integer","description":"the customer's id"},"page":{"type":"integer"}},"required":["customer"],"additionalProperties":false}`)
	for _, name := range []string{"lookup", "sum", "send_mail"} {
		req.Tools = append(req.Tools, llm.ToolSpec{Name: name, Description: "A tool of the benchmark that does " + name + ".", InputSchema: schema})
	}
	return req
}

// BenchmarkHit is a hit for a 20-message request: the key's hash of the
// request's canonical JSON, the lookup and the copy of the answer.
// Target: 50 µs.
func BenchmarkHit(b *testing.B) {
	req := benchRequest()
	if len(req.Messages) != 20 {
		b.Fatalf("%d messages", len(req.Messages))
	}
	c, err := cache.Open(scripted.New(scripted.Turn{Text: "The total is 177.75."}), cache.Options{})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if _, err := c.Complete(ctx, req); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Complete(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
	if st := c.Stats(); st.Misses != 1 {
		b.Fatalf("%d misses", st.Misses)
	}
}
