// Command memory-eval runs the memory eval (package
// github.com/autoagent-go/autoagent/memory/eval) and prints the results
// table.
//
// With an API key in the environment it measures a real model; without one
// it runs the deterministic scripted model. Settings come from the
// environment, so `make eval-memory` needs no flags:
//
//	AUTOAGENT_EVAL_PROVIDER  openai | anthropic | gemini | deepseek | groq |
//	                         openai-compatible | scripted
//	                         (default: the first of openai, anthropic, gemini,
//	                         deepseek whose key variable is set; else scripted)
//	AUTOAGENT_EVAL_MODEL     the model (default: a small, cheap model of the
//	                         provider)
//	AUTOAGENT_EVAL_BASE_URL  the server of openai-compatible (Ollama, vLLM, ...)
//
// The keys are read by the providers from their usual variables
// (OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY, DEEPSEEK_API_KEY,
// GROQ_API_KEY). A real run makes about 90 model calls.
//
// Flags: -configs (comma-separated: none, summarizing, fact, buffer),
// -limit N (first N scenarios), -json FILE (write the full report),
// -timeout.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/memory/eval"
	"github.com/autoagent-go/autoagent/providers/anthropic"
	"github.com/autoagent-go/autoagent/providers/gemini"
	"github.com/autoagent-go/autoagent/providers/openai"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "memory-eval:", err)
		os.Exit(1)
	}
}

func run() error {
	configs := flag.String("configs", "none,summarizing,fact", "memory configurations to compare: none, summarizing, fact, buffer")
	limit := flag.Int("limit", 0, "run only the first N scenarios (0: all)")
	jsonOut := flag.String("json", "", "write the full report (answers included) to this file")
	timeout := flag.Duration("timeout", 30*time.Minute, "bound on the whole run")
	flag.Parse()

	scenarios := eval.Scenarios()
	if *limit > 0 && *limit < len(scenarios) {
		scenarios = scenarios[:*limit]
	}
	mems, err := selectMemories(*configs)
	if err != nil {
		return err
	}
	p, label, err := providerFromEnv(scenarios)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "memory-eval: %s, %d scenarios, configurations %s\n", label, len(scenarios), *configs)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	rep, err := eval.Run(ctx, eval.Config{
		Provider:  p,
		Model:     os.Getenv("AUTOAGENT_EVAL_MODEL"),
		Memories:  mems,
		Scenarios: scenarios,
		Log:       os.Stderr,
	})
	if err != nil {
		return err
	}
	fmt.Print(rep.Markdown())
	if *jsonOut != "" {
		b, err := rep.JSON()
		if err != nil {
			return err
		}
		if err := os.WriteFile(*jsonOut, append(b, '\n'), 0o644); err != nil {
			return err
		}
	}
	return nil
}

func selectMemories(list string) ([]eval.MemoryConfig, error) {
	all := map[string]eval.MemoryConfig{}
	for _, m := range append(eval.DefaultMemories(), eval.BufferMemory()) {
		all[m.Name] = m
	}
	var out []eval.MemoryConfig
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		m, ok := all[name]
		if !ok {
			return nil, fmt.Errorf("unknown configuration %q (want none, summarizing, fact or buffer)", name)
		}
		out = append(out, m)
	}
	return out, nil
}

// providerFromEnv builds the provider named by AUTOAGENT_EVAL_PROVIDER, or
// the first one whose key is set, or the scripted model.
func providerFromEnv(scenarios []eval.Scenario) (llm.Provider, string, error) {
	name := os.Getenv("AUTOAGENT_EVAL_PROVIDER")
	if name == "" {
		name = "scripted"
		for _, c := range []struct{ name, env string }{
			{"openai", openai.DefaultAPIKeyEnv}, {"anthropic", anthropic.DefaultAPIKeyEnv},
			{"gemini", gemini.DefaultAPIKeyEnv}, {"deepseek", openai.DeepSeekAPIKeyEnv},
		} {
			if os.Getenv(c.env) != "" {
				name = c.name
				break
			}
		}
	}
	model := os.Getenv("AUTOAGENT_EVAL_MODEL")
	def := func(m string) string {
		if model != "" {
			return model
		}
		return m
	}
	var (
		p   llm.Provider
		err error
	)
	switch name {
	case "scripted":
		return eval.ScriptedModel(scenarios), "scripted model (no API key set: deterministic run)", nil
	case "openai":
		model = def("gpt-4o-mini")
		p, err = openai.New(openai.Options{Model: model})
	case "deepseek":
		model = def("deepseek-chat")
		p, err = openai.DeepSeek(openai.Options{Model: model})
	case "groq":
		model = def("llama-3.1-8b-instant")
		p, err = openai.Groq(openai.Options{Model: model})
	case "openai-compatible":
		base := os.Getenv("AUTOAGENT_EVAL_BASE_URL")
		if base == "" {
			return nil, "", errors.New("AUTOAGENT_EVAL_BASE_URL must name the server for openai-compatible")
		}
		if model == "" {
			return nil, "", errors.New("AUTOAGENT_EVAL_MODEL must name the model for openai-compatible")
		}
		p, err = openai.Compatible(base, openai.Options{Model: model})
	case "anthropic":
		model = def("claude-3-5-haiku-latest")
		p, err = anthropic.New(anthropic.Options{Model: model})
	case "gemini":
		model = def("gemini-2.0-flash")
		p, err = gemini.New(gemini.Options{Model: model})
	default:
		return nil, "", fmt.Errorf("unknown AUTOAGENT_EVAL_PROVIDER %q", name)
	}
	if err != nil {
		return nil, "", err
	}
	return p, name + " " + model, nil
}
