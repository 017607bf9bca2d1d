// Command ownmodel is an agent with one Go tool and a model of the
// program's own, through the front door (package autoagent):
//
//	go run ./examples/ownmodel "What is the weather in Oslo?"
//
// The model is any llm.Provider: a model running in the process, a
// company gateway's own client, a go-plugin backend (providers/remote),
// a test double. Here it is a few lines of rules, so the program runs
// with no key and no network. Config.LLM takes it as it is; a program
// that names a provider instead (providers/catalog, "openai") links the
// HTTP client and the providers' wire code too (examples/quickstart).
//
// Its test keeps the front door's weight in check: what this program
// links is what embedding the runtime costs before any provider.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"os"
	"strings"

	"github.com/autoagent-go/autoagent"
	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/tool"
)

// weatherIn is the weather tool's argument; its schema is inferred.
type weatherIn struct {
	City string `json:"city" jsonschema:"the city to look up"`
}

// weather is the agent's one tool: a Go function.
func weather(_ context.Context, in weatherIn) (string, error) {
	if strings.TrimSpace(in.City) == "" {
		return "", fmt.Errorf("name a city")
	}
	return "sunny, 21°C in " + in.City, nil
}

// rules is the program's own model: asked about a city ("… in Oslo?"),
// it calls the weather tool; given the tool's result, it answers with it.
type rules struct{}

var _ llm.Provider = rules{}

func (rules) Complete(_ context.Context, req *llm.Request) (*llm.Response, error) {
	if len(req.Messages) == 0 {
		return nil, fmt.Errorf("rules: a request with no messages")
	}
	last := req.Messages[len(req.Messages)-1]
	if results := last.ToolResults(); len(results) > 0 {
		r := results[0]
		if r.IsError {
			return answer("I could not look it up: " + r.Content), nil
		}
		return answer("It is " + r.Content + "."), nil
	}
	question := last.Text()
	_, after, found := strings.Cut(question, " in ")
	city := strings.TrimRight(strings.TrimSpace(after), "?!. ")
	if !found || city == "" {
		return answer("Ask me about the weather in a city."), nil
	}
	args, err := json.Marshal(weatherIn{City: city})
	if err != nil {
		return nil, err
	}
	call := llm.ToolCall{ID: "call-1", Name: "weather", Arguments: args}
	return &llm.Response{
		Message:      llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{llm.ToolCallPart(call)}},
		FinishReason: llm.FinishToolCalls,
	}, nil
}

func (p rules) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.StreamEvent, error] {
	return llm.StreamFromComplete(ctx, req, p.Complete)
}

// answer is a final text answer.
func answer(text string) *llm.Response {
	return &llm.Response{Message: llm.AssistantText(text), FinishReason: llm.FinishStop}
}

func main() {
	prompt := strings.Join(os.Args[1:], " ")
	if prompt == "" {
		prompt = "What is the weather in Oslo?"
	}
	if err := run(context.Background(), os.Stdout, prompt); err != nil {
		fmt.Fprintln(os.Stderr, "ownmodel:", err)
		os.Exit(1)
	}
}

// run runs the agent on prompt and prints its answer.
func run(ctx context.Context, out io.Writer, prompt string) error {
	t, err := tool.New("weather", "Current weather for a city.", weather)
	if err != nil {
		return err
	}
	rt, err := autoagent.New(ctx, autoagent.Config{LLM: rules{}, Tools: []tool.Tool{t}})
	if err != nil {
		return err
	}
	defer rt.Close(ctx)
	res, err := rt.Run(ctx, prompt)
	if err != nil {
		return err
	}
	fmt.Fprintln(out, res.Output)
	return nil
}
