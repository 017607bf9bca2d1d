// Command synthesize shows the two ways a model writes its own tools, both
// sandboxed in WebAssembly with no capabilities:
//
//  1. synthesis by example: a tool is written from (args, expected) pairs
//     and accepted only when it also passes examples the writer never saw;
//  2. create_tool: during an agent run, the model asks for a tool it lacks,
//     a second model writes it, and it is tested and registered for the run.
//
// Offline by default, with scripted models:
//
//	make synth-engine                 # once: builds the JavaScript engine
//	go run ./examples/synthesize
//
// With a real model (the writer and the agent use the same provider): it
// is used as soon as its key is set (OPENAI_API_KEY, ANTHROPIC_API_KEY or
// GEMINI_API_KEY, in that order), or named with -provider; -offline forces
// the scripted models.
//
//	OPENAI_API_KEY=... go run ./examples/synthesize -model gpt-4.1-mini
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/autoagent-go/autoagent/host"
	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/loop"
	"github.com/autoagent-go/autoagent/providers/catalog"
	"github.com/autoagent-go/autoagent/providers/scripted"
	"github.com/autoagent-go/autoagent/synth"
	"github.com/autoagent-go/autoagent/tool"
)

func main() {
	provider := flag.String("provider", "", "a real provider for both models (openai, anthropic, gemini, …); default: the first whose key is set")
	model := flag.String("model", "", "model name (default: the provider's default)")
	offline := flag.Bool("offline", false, "use the scripted models even when a key is set")
	staging := flag.String("staging", "", "staging directory for accepted tools (default: a temporary directory)")
	flag.Parse()
	ctx := context.Background()
	cfg := config{staging: *staging}
	if *provider == "" && !*offline {
		for _, name := range []string{"openai", "anthropic", "gemini"} {
			if os.Getenv(catalog.DefaultAPIKeyEnv(name)) != "" {
				*provider = name
				break
			}
		}
	}
	if *provider != "" && !*offline {
		fmt.Fprintf(os.Stderr, "using %s for the writer and the agent (-offline for the scripted models)\n", *provider)
		p, err := catalog.New(catalog.Config{Name: *provider, Model: *model})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		cfg.writer, cfg.agent = p, p
	}
	if cfg.staging == "" {
		dir, err := os.MkdirTemp("", "synthesize-example-*")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		defer os.RemoveAll(dir)
		cfg.staging = filepath.Join(dir, "staging")
	}
	if err := run(ctx, os.Stdout, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "synthesize:", err)
		os.Exit(1)
	}
}

// config says which models to use; nil models are the scripted ones.
type config struct {
	writer, agent llm.Provider
	staging       string
}

// slugExamples are the behaviour wanted from the slug tool.
var slugExamples = []struct{ title, slug string }{
	{"Hello World", "hello-world"},
	{"Go 1.26 is out!", "go-1-26-is-out"},
	{"  Leading and trailing  ", "leading-and-trailing"},
	{"A/B testing: why?", "a-b-testing-why"},
	{"Tabs\tand\nnewlines", "tabs-and-newlines"},
	{"MiXeD CaSe", "mixed-case"},
	{"under_score", "under-score"},
	{"100% sure", "100-sure"},
	{"--dashes--", "dashes"},
	{"C++ & Rust", "c-rust"},
}

func run(ctx context.Context, out io.Writer, cfg config) error {
	offline := cfg.writer == nil
	if offline {
		cfg.writer = scripted.New(writerScript()...)
		cfg.agent = scripted.New(agentScript()...)
	}
	h, err := host.New(ctx, host.Options{})
	if err != nil {
		return err
	}
	defer h.Close(ctx)
	b, err := synth.New(synth.Options{
		Host: h, Writer: cfg.writer, StagingDir: cfg.staging, Progress: os.Stderr,
		// create_tool's writer calls count against the run's token budget.
		OnUsage: func(ctx context.Context, u llm.Usage) { loop.ReportUsage(ctx, u) },
	})
	if err != nil {
		return err
	}
	defer b.Close(ctx)

	// 1. Synthesis by example.
	var examples []synth.Example
	for _, e := range slugExamples {
		args, _ := json.Marshal(map[string]string{"title": e.title})
		want, _ := json.Marshal(e.slug)
		examples = append(examples, synth.Example{Args: args, Expected: want})
	}
	fmt.Fprintln(out, "== synthesis by example: slugify")
	res, err := b.Synthesize(ctx, synth.Task{
		Goal:     "Turn a title into a URL slug.",
		Examples: examples,
		OnAttempt: func(a synth.Attempt) {
			verdict := "accepted"
			if !a.Accepted {
				verdict = "rejected: " + strings.SplitN(a.Feedback, "\n", 2)[0]
			}
			held := "not run"
			if a.HeldOutRan {
				held = fmt.Sprintf("%d/%d", a.HeldOutPassed, a.HeldOutTotal)
			}
			fmt.Fprintf(out, "attempt %d: shown %d/%d, held-out %s: %s\n", a.Index, a.ShownPassed, a.ShownTotal, held, verdict)
		},
	})
	if err != nil {
		return err
	}
	if !res.Accepted() {
		return fmt.Errorf("no slug tool accepted after %d attempts", len(res.Attempts))
	}
	fmt.Fprintf(out, "accepted %s: %d examples shown, %d held out", res.Tool.Name(), res.Shown, res.HeldOut)
	if res.Usage != nil {
		fmt.Fprintf(out, "; writer used %d tokens", res.Usage.TotalTokens)
	}
	fmt.Fprintln(out)
	if res.Staged != nil {
		fmt.Fprintf(out, "staged for review: %s, %s (%s)\n", filepath.Base(res.Staged.Module), filepath.Base(res.Staged.Source), filepath.Base(res.Staged.Sidecar))
	}
	got, err := res.Tool.Call(ctx, tool.Call{Name: res.Tool.Name(), Arguments: json.RawMessage(`{"title":"Sandboxes, not Docker!"}`)})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "%s(\"Sandboxes, not Docker!\") = %s\n", res.Tool.Name(), got.Text())

	// 2. create_tool during an agent run.
	fmt.Fprintln(out, "\n== create_tool during a run")
	type in struct {
		Text string `json:"text" jsonschema:"the text"`
	}
	upper := tool.Must(tool.New("shout", "Upper-cases a text (a host tool).", func(_ context.Context, a in) (string, error) {
		return strings.ToUpper(a.Text), nil
	}))
	reg, err := tool.NewRegistry(upper)
	if err != nil {
		return err
	}
	// One create_tool per run, with the run's registry and its own budget.
	create := b.CreateTool(reg, synth.CreateToolOptions{Budget: 2})
	defer create.Close(ctx)
	if err := reg.Add(create); err != nil {
		return err
	}
	agent := &loop.Agent{Provider: cfg.agent, Tools: reg, System: "Use tools for anything you would otherwise compute in your head. If no tool fits, create one with create_tool."}
	result, err := agent.Run(ctx, "How many vowels are there in \"Sandboxed tools keep the host safe\"?")
	if err != nil {
		return err
	}
	for _, m := range result.Messages {
		for _, p := range m.Parts {
			if p.ToolCall != nil {
				fmt.Fprintf(out, "→ %s %s\n", p.ToolCall.Name, p.ToolCall.Arguments)
			}
			if p.ToolResult != nil {
				fmt.Fprintf(out, "← %s\n", clip(p.ToolResult.Content, 160))
			}
		}
	}
	fmt.Fprintf(out, "answer: %s\n", result.Output)
	fmt.Fprintf(out, "tools created this run: %d of %d allowed", create.Used(), 2)
	if result.UsageReported {
		fmt.Fprintf(out, "; run used %d tokens, tool writing included", result.Usage.TotalTokens)
	}
	fmt.Fprintln(out)
	return nil
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// writerScript plays the writer model offline: a first slug tool that
// passes the shown examples but not a held-out one, the general one, then the
// vowel counter create_tool asks for. (The first slug tool splits words
// only on the separators of the examples it was shown.)
func writerScript() []scripted.Turn {
	draft := func(name, desc, schema, src string, tests ...string) scripted.Turn {
		var st []json.RawMessage
		for _, t := range tests {
			st = append(st, json.RawMessage(t))
		}
		b, _ := json.Marshal(map[string]any{
			"name": name, "description": desc, "input_schema": json.RawMessage(schema), "source": src, "self_tests": st,
		})
		return scripted.Turn{Text: string(b), Usage: &llm.Usage{InputTokens: 600, OutputTokens: 150}}
	}
	slugSchema := `{"type":"object","properties":{"title":{"type":"string"}},"required":["title"]}`
	return []scripted.Turn{
		draft("slugify", "Turns a title into a URL slug.", slugSchema,
			`function run(a) { return a.title.trim().toLowerCase().split(/[\s\/:?!._%-]+/).filter(Boolean).join("-") }`),
		draft("slugify", "Turns a title into a URL slug: lower-case letters and digits, words joined by '-'.", slugSchema,
			`function run(a) { return a.title.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-+|-+$/g, "") }`,
			`{"args":{"title":"Hello, World"},"expect":"hello-world"}`),
		draft("count_vowels", "Counts the vowels (a, e, i, o, u, either case) in a text.",
			`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`,
			`function run(a) { return { vowels: (a.text.match(/[aeiou]/gi) || []).length } }`,
			`{"args":{"text":"Banana"},"expect":{"vowels":3}}`),
	}
}

// agentScript plays the agent's model offline: it asks for a vowel
// counter, calls it, and answers.
func agentScript() []scripted.Turn {
	call := func(id, name, args string) []llm.ToolCall {
		return []llm.ToolCall{{ID: id, Name: name, Arguments: json.RawMessage(args)}}
	}
	usage := &llm.Usage{InputTokens: 400, OutputTokens: 40}
	return []scripted.Turn{
		{ToolCalls: call("c1", "create_tool", `{"capability":"count the vowels (a, e, i, o, u, any case) in a text; return {\"vowels\": n}","name":"count_vowels"}`), Usage: usage},
		{ToolCalls: call("c2", "count_vowels", `{"text":"Sandboxed tools keep the host safe"}`), Usage: usage},
		{Text: "There are 11 vowels in \"Sandboxed tools keep the host safe\".", Usage: usage},
	}
}
