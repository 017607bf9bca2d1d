// Package autoagent is the facade of an embeddable LLM agent runtime whose
// tools run as sandboxed WebAssembly modules: it builds providers by name
// ([NewProvider]) the way the CLI does. The pieces themselves live in their
// own packages: llm (the vocabulary), tool, loop (the agent loop), providers/…,
// host (the WASM sandbox), manifest (approvals), memory, trace.
package autoagent
