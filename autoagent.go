// Package autoagent is an embeddable LLM agent runtime whose tools run as
// sandboxed WebAssembly modules. This root package is the front door: one
// [New] builds a [Runtime] that runs a model over Go tools, memory,
// tracing, policy, checkpoints and a workspace; [Runtime.Close] releases
// what it opened. What has weight comes in as a value built by the
// package that owns it, so a program links only what it names: the model
// (providers/catalog by name, any package of providers/, or a go-plugin
// backend from providers/remote), the session store
// (session/sqlitestore), trace sinks (trace/otel/otlp), and [Feature]s:
// the WASM sandbox with its plugins directory, code mode and create_tool
// (package sandbox), MCP servers (package mcp/mount).
//
//	model, err := catalog.New(catalog.Config{Name: "openai"}) // reads OPENAI_API_KEY
//	if err != nil {
//		return err
//	}
//	sessions, err := sqlitestore.Open("sessions.db", sqlitestore.Options{}) // conversations that outlive the process
//	if err != nil {
//		return err
//	}
//	defer sessions.Close()
//	rt, err := autoagent.New(ctx, autoagent.Config{
//		LLM:        model,
//		PolicyFile: "policy.json", // allow / deny / approve rules
//		Sessions:   sessions,
//		Features: []autoagent.Feature{
//			&sandbox.Sandbox{Plugins: &sandbox.PluginsConfig{Dir: "plugins"}}, // tools approved with `autoagent tools approve`
//			mount.Servers{{Command: []string{"node", "crm-server.js"}, Prefix: "crm_"}},
//		},
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
// guards, policy and approvals as the model's (sandbox.HostOptions,
// loop.CallNested).
//
// [Runtime.Agent] is the loop.Agent underneath, for Stream, Resume after an
// approval pause, and everything else of package loop; serve.New serves it
// over HTTP.
//
// # Packages
//
//   - llm: the vocabulary (messages, tool calls, requests, usage, the Provider interface).
//   - tool: tools, schema inference, argument validation, the registry.
//   - loop: the agent loop, bounds, guards, policy, approvals, checkpoints, replay.
//   - providers/...: OpenAI and compatible servers, Anthropic, Gemini, catalog (by
//     name), routing, remote (go-plugin), scripted (offline), providertest (conformance).
//   - sandbox: a Runtime's WASM host, plugins directory, code mode, create_tool.
//   - host: the WebAssembly sandbox; manifest: approvals pinned to sha256.
//   - mcp: MCP client and server; mcp/mount: MCP servers as a Runtime's Feature.
//   - memory: Buffer, Summarizing and Fact memories; session: persistent conversations
//     (session/sqlitestore: the SQLite store).
//   - orchestrator: a flow the host owns, filled in by a model that only interprets and phrases.
//   - trace: events, redaction; trace/otel: OpenTelemetry spans, sent by trace/otel/otlp.
package autoagent
