// Command quickstart is an agent with one Go tool, through the front door
// (package autoagent) and nothing else:
//
//	go run ./examples/quickstart -offline "What is the weather in Oslo?"
//	OPENAI_API_KEY=… go run ./examples/quickstart "What is the weather in Oslo?"
//
// -offline plays a scripted model, so the program runs with no key and no
// network; -provider picks another provider by name. Its test keeps the
// front door's weight in check: what this program links is what a
// quickstart pays.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/autoagent-go/autoagent"
	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/providers/catalog"
	"github.com/autoagent-go/autoagent/providers/scripted"
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

// offline is the scripted model: it calls the tool, then answers.
func offline() llm.Provider {
	return scripted.New(
		scripted.Turn{ToolCalls: []llm.ToolCall{{ID: "c1", Name: "weather", Arguments: json.RawMessage(`{"city":"Oslo"}`)}}},
		scripted.Turn{Text: "It is sunny and 21°C in Oslo."},
	)
}

func main() {
	provider := flag.String("provider", "openai", "model provider: "+strings.Join(catalog.Names(), ", "))
	model := flag.String("model", "", "model name (default: the provider's)")
	off := flag.Bool("offline", false, "play a scripted model: no key, no network")
	flag.Parse()
	prompt := strings.Join(flag.Args(), " ")
	if prompt == "" {
		prompt = "What is the weather in Oslo?"
	}
	cfg := autoagent.Config{LLM: offline()}
	if !*off {
		// The model by name: the provider table, with its HTTP client.
		p, err := catalog.New(catalog.Config{Name: *provider, Model: *model})
		if err != nil {
			fmt.Fprintln(os.Stderr, "quickstart:", err)
			os.Exit(2)
		}
		cfg.LLM = p
	}
	if err := run(context.Background(), os.Stdout, cfg, prompt); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

// run runs the agent on prompt and prints its answer.
func run(ctx context.Context, out io.Writer, cfg autoagent.Config, prompt string) error {
	t, err := tool.New("weather", "Current weather for a city.", weather)
	if err != nil {
		return err
	}
	cfg.Tools = append(cfg.Tools, t)
	rt, err := autoagent.New(ctx, cfg)
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
