package autoagent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/loop"
	"github.com/autoagent-go/autoagent/providers/scripted"
	"github.com/autoagent-go/autoagent/tool"
)

// The quickstart: a Go function becomes a tool with a schema inferred from
// its argument type, and an agent runs a model that calls it. A scripted
// model stands in for a real provider so the example runs offline; swap in
// autoagent.NewProvider(autoagent.ProviderConfig{Name: "openai"}) for a real one.
func Example() {
	type WeatherIn struct {
		City string `json:"city" jsonschema:"the city to look up"`
	}
	weather, err := tool.New("weather", "Current weather for a city.",
		func(ctx context.Context, in WeatherIn) (string, error) {
			return "sunny, 21°C in " + in.City, nil
		})
	if err != nil {
		log.Fatal(err)
	}
	tools, err := tool.NewRegistry(weather)
	if err != nil {
		log.Fatal(err)
	}
	model := scripted.New(
		scripted.Turn{ToolCalls: []llm.ToolCall{{ID: "c1", Name: "weather", Arguments: json.RawMessage(`{"city":"Oslo"}`)}}},
		scripted.Turn{Text: "It is sunny and 21°C in Oslo."},
	)
	agent := &loop.Agent{Provider: model, Tools: tools, Bounds: loop.Bounds{MaxSteps: 4}}

	res, err := agent.Run(context.Background(), "What's the weather in Oslo?")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Output)
	fmt.Println("steps:", res.Steps, "stop:", res.StopReason)
	fmt.Println("the tool said:", res.Messages[3].ToolResults()[0].Content)
	// Output:
	// It is sunny and 21°C in Oslo.
	// steps: 2 stop: done
	// the tool said: sunny, 21°C in Oslo
}
