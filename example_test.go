package autoagent_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/autoagent-go/autoagent"
	"github.com/autoagent-go/autoagent/codemode"
	"github.com/autoagent-go/autoagent/manifest"
	"github.com/autoagent-go/autoagent/providers/catalog"
	"github.com/autoagent-go/autoagent/sandbox"
	"github.com/autoagent-go/autoagent/session/sqlitestore"
	"github.com/autoagent-go/autoagent/tool"
)

// The quickstart: one Runtime owns the model, the sandboxed tools of a
// plugins directory (only modules a person approved run, each with its
// approved grants), the policy, the trace and the session store. A scripted
// model stands in for a real provider so the example runs offline; use
// catalog.Config{Name: "openai"} (OPENAI_API_KEY) for a real one.
func Example() {
	dir := examplePlugins() // plugins/echo.wasm, approved with `autoagent tools approve`
	defer os.RemoveAll(dir)
	script := filepath.Join(dir, "script.jsonl")
	os.WriteFile(script, []byte(`{"tool_calls":[{"id":"c1","name":"echo","arguments":{"msg":"hello from the sandbox"}}]}
{"text":"The sandboxed echo answered."}
`), 0o644)

	ctx := context.Background()
	sessions, err := sqlitestore.Open(filepath.Join(dir, "sessions.db"), sqlitestore.Options{}) // the store is the program's
	if err != nil {
		log.Fatal(err)
	}
	defer sessions.Close()
	model, err := catalog.New(catalog.Config{Name: "scripted", ScriptFile: script}) // or {Name: "openai"}
	if err != nil {
		log.Fatal(err)
	}
	rt, err := autoagent.New(ctx, autoagent.Config{
		LLM:      model,
		Features: []autoagent.Feature{&sandbox.Sandbox{Plugins: &sandbox.PluginsConfig{Dir: filepath.Join(dir, "plugins")}}},
		Sessions: sessions,
	})
	if err != nil {
		log.Fatal(err)
	}
	defer rt.Close(ctx)

	res, err := rt.Run(ctx, "Say hello through the sandbox.")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Output)
	fmt.Println("steps:", res.Steps, "stop:", res.StopReason)
	fmt.Println("the tool said:", res.Messages[3].ToolResults()[0].Content)
	// Output:
	// The sandboxed echo answered.
	// steps: 2 stop: done
	// the tool said: {"msg":"hello from the sandbox"}
}

// A Go function becomes a tool with a schema inferred from its argument
// type, beside the sandboxed ones.
func Example_goTool() {
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
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	script := filepath.Join(dir, "script.jsonl")
	os.WriteFile(script, []byte(`{"tool_calls":[{"id":"c1","name":"weather","arguments":{"city":"Oslo"}}]}
{"text":"It is sunny and 21°C in Oslo."}
`), 0o644)

	ctx := context.Background()
	model, err := catalog.New(catalog.Config{Name: "scripted", ScriptFile: script}) // or {Name: "openai"}
	if err != nil {
		log.Fatal(err)
	}
	rt, err := autoagent.New(ctx, autoagent.Config{
		LLM:   model,
		Tools: []tool.Tool{weather},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer rt.Close(ctx)
	res, err := rt.Run(ctx, "What's the weather in Oslo?")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Output)
	// Output:
	// It is sunny and 21°C in Oslo.
}

// examplePlugins makes a directory holding plugins/echo.wasm and a manifest
// approving it, as `autoagent tools approve plugins/echo.wasm` would.
func examplePlugins() string {
	dir, err := os.MkdirTemp("", "example")
	if err != nil {
		log.Fatal(err)
	}
	plugins := filepath.Join(dir, "plugins")
	os.Mkdir(plugins, 0o755)
	b, err := os.ReadFile(filepath.Join("testdata", "wasm", "echo.wasm"))
	if err != nil {
		log.Fatal(err)
	}
	os.WriteFile(filepath.Join(plugins, "echo.wasm"), b, 0o644)
	st := &manifest.Store{Path: filepath.Join(plugins, "manifest.json")}
	if _, err := st.Approve(context.Background(), manifest.Approval{SHA256: manifest.Sum(b), File: "echo.wasm", By: "example"}); err != nil {
		log.Fatal(err)
	}
	return dir
}

// Code mode: the model writes one program that calls the tools, and each
// call passes the run's gate. The scripted model's program fetches three
// orders and sums their refunds in one step.
func Example_codeMode() {
	type OrderIn struct {
		ID int `json:"id" jsonschema:"the order's id"`
	}
	type Order struct {
		ID     int `json:"id"`
		Refund int `json:"refund"`
	}
	getOrder, err := tool.New("get_order", "Fetch an order by id.",
		func(ctx context.Context, in OrderIn) (Order, error) {
			return Order{ID: in.ID, Refund: 10 * in.ID}, nil
		})
	if err != nil {
		log.Fatal(err)
	}
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	script := filepath.Join(dir, "script.jsonl")
	os.WriteFile(script, []byte(`{"tool_calls":[{"id":"p1","name":"run_program","arguments":{"code":"let total = 0\nfor (const id of [1, 2, 3]) total += (await tools.get_order({id})).refund\nreturn {total}"}}]}
{"text":"The three refunds total 60."}
`), 0o644)

	ctx := context.Background()
	model, err := catalog.New(catalog.Config{Name: "scripted", ScriptFile: script}) // or {Name: "openai"}
	if err != nil {
		log.Fatal(err)
	}
	rt, err := autoagent.New(ctx, autoagent.Config{
		LLM:      model,
		Tools:    []tool.Tool{getOrder},
		Features: []autoagent.Feature{&sandbox.Sandbox{CodeMode: sandbox.CodeModeConfig{Mode: codemode.Only}}},
	})
	if err != nil {
		log.Fatal(err) // jsprogram.ErrNoEngine: build it with `make synth-engine`
	}
	defer rt.Close(ctx)
	res, err := rt.Run(ctx, "Total the refunds of orders 1 to 3.")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Output)
	fmt.Println("the program gave:", res.Messages[3].ToolResults()[0].Content)
	// Output:
	// The three refunds total 60.
	// the program gave: {"result":{"total":60}}
}
