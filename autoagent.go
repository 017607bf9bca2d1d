// Package autoagent is an embeddable LLM agent runtime whose tools run as
// sandboxed WebAssembly modules. This root package is the front door: one
// [New] builds a [Runtime] that owns the model provider (by name), the WASM
// host with its plugins directory (hot-reloaded, only approved modules,
// code mode gated by the run), MCP servers, memory, tracing, policy and
// checkpoints; [Runtime.Close] releases all of it. What has weight comes
// in as an interface from the package that owns it, and stays the
// program's to close: the session store (session/sqlitestore), trace
// sinks (trace/otel/otlp), a provider built by hand (providers/remote).
//
//	sessions, err := sqlitestore.Open("sessions.db", sqlitestore.Options{}) // conversations that outlive the process
//	if err != nil {
//		return err
//	}
//	defer sessions.Close()
//	rt, err := autoagent.New(ctx, autoagent.Config{
//		Provider:   autoagent.ProviderConfig{Name: "openai"}, // reads OPENAI_API_KEY
//		Plugins:    &autoagent.PluginsConfig{Dir: "plugins"}, // tools approved with `autoagent tools approve`
//		MCP:        []autoagent.MCPServer{{Command: []string{"node", "crm-server.js"}, Prefix: "crm_"}},
//		PolicyFile: "policy.json", // allow / deny / approve rules
//		Sessions:   sessions,
//	})
//	if err != nil {
//		return err
//	}
//	defer rt.Close(ctx)
//	res, err := rt.Continue(ctx, autoagent.SessionKey{User: "ada", Session: "support"}, "Where is my order?")
//	fmt.Println(res.Output)
//
// MCP tools are untrusted by default: their results are framed as data and
// taint the run, after which egress tools are refused (the trifecta guard).
// A sandboxed module's calls of host tools (tools: grants) pass the same
// guards, policy and approvals as the model's ([HostOptions],
// loop.CallNested).
//
// [Runtime.Agent] is the loop.Agent underneath, for Stream, Resume after an
// approval pause, and everything else of package loop.
//
// # Packages
//
//   - llm: the vocabulary (messages, tool calls, requests, usage, the Provider interface).
//   - tool: tools, schema inference, argument validation, the registry.
//   - loop: the agent loop, bounds, guards, policy, approvals, checkpoints, replay.
//   - providers/...: OpenAI and compatible servers, Anthropic, Gemini, catalog (by
//     name), routing, remote (go-plugin), scripted (offline), providertest (conformance).
//   - host: the WebAssembly sandbox; manifest: approvals pinned to sha256.
//   - mcp: MCP client (mount a server's tools) and server.
//   - memory: Buffer, Summarizing and Fact memories; session: persistent conversations
//     (session/sqlitestore: the SQLite store).
//   - orchestrator: a flow the host owns, filled in by a model that only interprets and phrases.
//   - trace: events, redaction; trace/otel: OpenTelemetry spans, sent by trace/otel/otlp.
package autoagent
