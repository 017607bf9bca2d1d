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
	"cmp"
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
	"github.com/autoagent-go/autoagent/providers/catalog"
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
// the first one whose key is set, or the scripted model. Names, default
// models and key variables are the catalog's, as everywhere else.
func providerFromEnv(scenarios []eval.Scenario) (llm.Provider, string, error) {
	name := os.Getenv("AUTOAGENT_EVAL_PROVIDER")
	if name == "" {
		name = "scripted"
		for _, n := range catalog.HTTPNames() {
			if env := catalog.DefaultAPIKeyEnv(n); env != "" && os.Getenv(env) != "" {
				name = n
				break
			}
		}
	}
	if name == "scripted" {
		return eval.ScriptedModel(scenarios), "scripted model (no API key set: deterministic run)", nil
	}
	model := cmp.Or(os.Getenv("AUTOAGENT_EVAL_MODEL"), catalog.DefaultModel(name))
	base := os.Getenv("AUTOAGENT_EVAL_BASE_URL")
	if name == "openai-compatible" {
		if base == "" {
			return nil, "", errors.New("AUTOAGENT_EVAL_BASE_URL must name the server for openai-compatible")
		}
		if model == "" {
			return nil, "", errors.New("AUTOAGENT_EVAL_MODEL must name the model for openai-compatible")
		}
	}
	p, err := catalog.New(catalog.Config{Name: name, Model: model, BaseURL: base})
	if err != nil {
		return nil, "", fmt.Errorf("AUTOAGENT_EVAL_PROVIDER: %w", err)
	}
	return p, name + " " + model, nil
}
