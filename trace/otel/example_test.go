package otel_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/loop"
	"github.com/autoagent-go/autoagent/providers/scripted"
	"github.com/autoagent-go/autoagent/tool"
	"github.com/autoagent-go/autoagent/trace"
	"github.com/autoagent-go/autoagent/trace/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

type echoIn struct {
	Text string `json:"text"`
}

// A run of the agent loop exported as OpenTelemetry spans, named by the
// gen_ai semantic conventions: the run, its two model calls, and the tool
// call the first one asked for.
func Example() {
	spans := tracetest.NewSpanRecorder() // stands in for an exporter to a collector
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	exp, err := otel.New(tp, otel.Options{Semconv: otel.GenAI})
	if err != nil {
		fmt.Println(err)
		return
	}
	echo, _ := tool.New("echo", "Echo the text.", func(_ context.Context, in echoIn) (string, error) { return in.Text, nil })
	tools, _ := tool.NewRegistry(echo)
	agent := &loop.Agent{
		Provider: scripted.New( // a scripted model, offline
			scripted.Turn{ToolCalls: []llm.ToolCall{{ID: "c1", Name: "echo", Arguments: json.RawMessage(`{"text":"hi"}`)}}},
			scripted.Turn{Text: "The tool said hi."},
		),
		Tools:  tools,
		Tracer: trace.New(exp),
	}
	if _, err := agent.Run(context.Background(), "Say hi through the tool."); err != nil {
		fmt.Println(err)
		return
	}
	_ = exp.Close()

	names := map[string]string{}
	for _, s := range spans.Ended() {
		names[s.SpanContext().SpanID().String()] = s.Name()
	}
	for _, s := range spans.Ended() {
		parent := names[s.Parent().SpanID().String()]
		if parent == "" {
			parent = "(root)"
		}
		fmt.Printf("%s, child of %s\n", s.Name(), parent)
	}
	// Output:
	// chat, child of invoke_agent
	// execute_tool echo, child of chat
	// chat, child of invoke_agent
	// invoke_agent, child of (root)
}
