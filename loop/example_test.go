package loop_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/loop"
	"github.com/autoagent-go/autoagent/policy"
	"github.com/autoagent-go/autoagent/providers/scripted"
	"github.com/autoagent-go/autoagent/tool"
)

type weatherIn struct {
	City string `json:"city" jsonschema:"the city"`
}

func weatherTool() tool.Tool {
	return tool.Must(tool.New("weather", "Current weather for a city.", func(_ context.Context, in weatherIn) (string, error) {
		return "light rain in " + in.City, nil
	}))
}

func Example() {
	// A scripted model stands in for a real provider.
	model := scripted.New(
		scripted.Turn{ToolCalls: []llm.ToolCall{{ID: "c1", Name: "weather", Arguments: json.RawMessage(`{"city":"Oslo"}`)}}},
		scripted.Turn{Text: "Yes: light rain in Oslo."},
	)
	tools, _ := tool.NewRegistry(weatherTool())
	agent := &loop.Agent{Provider: model, Tools: tools, System: "You are a weather assistant."}

	res, err := agent.Run(context.Background(), "Do I need an umbrella in Oslo?")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Output)
	fmt.Println(res.Steps, res.StopReason)
	// Output:
	// Yes: light rain in Oslo.
	// 2 done
}

func ExampleAgent_Stream() {
	model := scripted.NewWithOptions(scripted.Options{ChunkSize: 8},
		scripted.Turn{ToolCalls: []llm.ToolCall{{ID: "c1", Name: "weather", Arguments: json.RawMessage(`{"city":"Rome"}`)}}},
		scripted.Turn{Text: "Take an umbrella."},
	)
	tools, _ := tool.NewRegistry(weatherTool())
	agent := &loop.Agent{Provider: model, Tools: tools}
	for ev, err := range agent.Stream(context.Background(), "Rome?") {
		switch {
		case err != nil:
			fmt.Println("error:", err)
		case ev.Type == loop.EventText:
			fmt.Printf("%q\n", ev.Text)
		case ev.Type == loop.EventToolEnd:
			fmt.Println(ev.Call.Name, "→", ev.ToolResult.Content)
		case ev.Type == loop.EventDone:
			fmt.Println("done after", ev.Result.Steps, "steps")
		}
	}
	// Output:
	// weather → light rain in Rome
	// "Take an "
	// "umbrella"
	// "."
	// done after 2 steps
}

func ExampleAgent_Resume() {
	pay := tool.Must(tool.New("pay", "Pay someone.", func(_ context.Context, in struct {
		To  string `json:"to"`
		EUR int    `json:"eur"`
	}) (string, error) {
		return fmt.Sprintf("paid %d EUR to %s", in.EUR, in.To), nil
	}))
	model := scripted.New(
		scripted.Turn{ToolCalls: []llm.ToolCall{{ID: "p1", Name: "pay", Arguments: json.RawMessage(`{"to":"bob","eur":40}`)}}},
		scripted.Turn{Text: "Bob has been paid."},
	)
	tools, _ := tool.NewRegistry(pay)
	pol, _ := policy.Parse([]byte(`{"rules":[{"tool":"pay","action":"approve","reason":"payments need a human"}]}`))
	agent := &loop.Agent{Provider: model, Tools: tools, Checks: loop.Checks{Policy: pol}}

	_, err := agent.Run(context.Background(), "Pay bob 40 EUR")
	var stop *loop.StopError
	if !errors.As(err, &stop) {
		fmt.Println(err)
		return
	}
	for _, p := range stop.Pending {
		fmt.Printf("pending %s %s: %s\n", p.Call.ID, p.Call.Name, p.Reason)
	}
	// The state would be saved, shown to a human, and loaded again.
	res, err := agent.Resume(context.Background(), stop.State, loop.Approve("p1"))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Messages[3].ToolResults()[0].Content)
	fmt.Println(res.Output)
	// Output:
	// pending p1 pay: payments need a human
	// paid 40 EUR to bob
	// Bob has been paid.
}

func ExampleOpenFileStore() {
	dir, _ := os.MkdirTemp("", "autoagent")
	defer os.RemoveAll(dir)
	store, err := loop.OpenFileStore(filepath.Join(dir, "run.state.json"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer store.Close()
	model := scripted.New(scripted.Turn{Text: "hello"})
	agent := &loop.Agent{Provider: model, Bounds: loop.Bounds{MaxSteps: 3}}
	store.Attach(agent) // checkpoints and the tool-call journal on disk
	if _, err := agent.Run(context.Background(), "hi"); err != nil {
		fmt.Println(err)
		return
	}
	st, _ := store.Load()
	fmt.Println(st.Status, st.Step)
	// Output:
	// done 1
}
