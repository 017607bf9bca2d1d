// Package autoagent is an embeddable LLM agent runtime whose tools run as
// sandboxed WebAssembly modules. This root package is a thin facade: it
// builds providers by name ([NewProvider]) and loads a plugins directory of
// approved WebAssembly tools ([OpenPlugins]) the way the CLI does.
//
// A Go function becomes a tool, and an agent runs a model that calls it:
//
//	weather, _ := tool.New("weather", "Current weather for a city.",
//		func(ctx context.Context, in struct {
//			City string `json:"city" jsonschema:"the city to look up"`
//		}) (string, error) {
//			return "sunny in " + in.City, nil
//		})
//	tools, _ := tool.NewRegistry(weather)
//	model, _ := autoagent.NewProvider(autoagent.ProviderConfig{Name: "openai"}) // reads OPENAI_API_KEY
//	agent := &loop.Agent{Provider: model, Tools: tools}
//	res, err := agent.Run(ctx, "What's the weather in Oslo?")
//
// Sandboxed tools come from a plugins directory whose modules a person
// approved (`autoagent tools approve`):
//
//	h, dir, err := autoagent.OpenPlugins(ctx, autoagent.PluginsConfig{Dir: "plugins"})
//	defer h.Close(ctx)
//	defer dir.Close(ctx)
//	dir.Publish(tools) // approved tools join the registry, kept current on reload
//
// # Packages
//
//   - llm: the vocabulary (messages, tool calls, requests, usage, the Provider interface).
//   - tool: tools, schema inference, argument validation, the registry.
//   - loop: the agent loop, bounds, guards, policy, approvals, checkpoints, replay.
//   - providers/...: OpenAI and compatible servers, Anthropic, Gemini, routing,
//     remote (go-plugin), scripted (offline), providertest (conformance).
//   - host: the WebAssembly sandbox; manifest: approvals pinned to sha256.
//   - memory: Buffer, Summarizing and Fact memories; trace: events, redaction.
package autoagent
