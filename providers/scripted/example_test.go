package scripted_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/providers/scripted"
)

func Example() {
	p := scripted.New(
		scripted.Turn{ToolCalls: []llm.ToolCall{{ID: "c1", Name: "weather", Arguments: json.RawMessage(`{"city":"Oslo"}`)}}},
		scripted.Turn{Text: "It is sunny in Oslo."},
	)
	ctx := context.Background()
	r1, _ := p.Complete(ctx, &llm.Request{Messages: []llm.Message{llm.UserText("Weather in Oslo?")}})
	fmt.Println(r1.Message.ToolCalls()[0].Name)
	r2, _ := p.Complete(ctx, &llm.Request{})
	fmt.Println(r2.Message.Text())
	_, err := p.Complete(ctx, &llm.Request{})
	fmt.Println(err != nil)
	// Output:
	// weather
	// It is sunny in Oslo.
	// true
}

func ExampleParse() {
	turns, err := scripted.Parse(strings.NewReader(`
{"tool_calls":[{"name":"search","arguments":{"q":"go iterators"}}]}
{"text":"Use iter.Seq."}
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	p := scripted.NewWithOptions(scripted.Options{ChunkSize: 4}, turns...)
	_, _ = p.Complete(context.Background(), &llm.Request{}) // the search call
	var deltas []string
	for ev, err := range p.Stream(context.Background(), &llm.Request{}) {
		if err == nil && ev.Type == llm.StreamText {
			deltas = append(deltas, fmt.Sprintf("%q", ev.Text))
		}
	}
	fmt.Println(strings.Join(deltas, " "))
	// Output:
	// "Use " "iter" ".Seq" "."
}
