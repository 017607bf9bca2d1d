// Package trace records what an agent run did as typed lifecycle events
// (run, model call, tool call, guard refusal, approval, checkpoint), each
// with a span id and its parent's, written as JSONL and/or handed to a
// callback, with secrets redacted before any sink sees them.
//
//	tr, err := trace.OpenFile("run.jsonl")
//	if err != nil {
//		return err
//	}
//	defer tr.Close()
//	agent := &loop.Agent{Provider: p, Tracer: tr}
//	_, err = agent.Run(ctx, "...")
//
//	// later, or from `autoagent trace summarize run.jsonl`:
//	f, _ := os.Open("run.jsonl")
//	sum, _ := trace.Summarize(f)
//	fmt.Print(sum)
//
// The package example writes events, reads the file back and summarises it.
//
// # Events and spans
//
// Each [Event] has a [Type], a SpanID and the ParentID of the span it
// belongs to: run_start is the root, llm_request a child of the run,
// tool_call_start a child of the model call that asked for it, and each
// closer (run_end, llm_response, tool_call_end) a child of its opener.
// A sub-agent's run_start is a child of the parent's tool call when the two
// share a Tracer. A JSONL line is
//
//	{"type":"tool_call_end","span_id":"…","parent_id":"…","run_id":"…","ts":"…","payload":{…}}
//
// # Payloads
//
// An event's [Payload] is typed by the family of its type: [Run] (run
// start, end and stops, checkpoints), [ModelCall], [ToolCall], [Guard]
// (guards, policy, approvals, guardrails), [Hook], [Memory] (context
// window and memory), [Sandbox] (sandbox_call, from the WASM host) and
// [Synth] (synth_<stage>, from building a model-written tool). Each
// type's comment says which fields it sets. An embedder's own event types
// carry [Fields]; so does, when a file is read, any type this version does
// not know, with every field kept.
//
// # File format
//
// Trace files are in format 2. Format 1 (before typed payloads) wrote the
// same keys for the same events, except that a sandbox_call's "attrs"
// held only strings: memory_peak ("2097152") and pooled ("true") are now
// a number and a boolean, and grants, grants_used and denied, once joined
// by spaces or "; ", are arrays. [Event.UnmarshalJSON], and so
// [Summarize], reads both formats. It ignores the keys it does not know in
// an event of a type it knows, and keeps every field of a type it does
// not know.
//
// # Cost and failure
//
// A nil *Tracer is valid and does nothing; the agent loop does not even
// build previews when it has no tracer. Emit never fails and never panics:
// a sink that errors or panics is recorded in [Tracer.Err] and the run goes
// on. Emission is serialised, so a file's order is the emission order even
// with concurrent emitters.
//
// An [Event] holds its payload as an interface, so a payload stored in one
// is copied to the heap. [EmitPayload] takes the payload apart, as its own
// type, and gives it as it is to a [JSONL] sink: the agent loop emits
// this way, and an event then allocates only its span id.
//
// # Redaction
//
// Every string of every event is passed through [Redact] inside Emit,
// before any sink: bearer tokens and Authorization values, API keys
// (sk-…, AIza…, gsk_…, AKIA…, GitHub/GitLab/Slack/Hugging Face tokens,
// JWTs), x-api-key / x-goog-api-key / api_key= values, key= and sig= query
// parameters, passwords in URLs, PEM private keys, and the values of
// secret-named JSON fields (password, token, secret, api_key,
// authorization, …). The loop's previews are redacted before being cut
// ([Preview]), so a secret is never half-kept.
//
// # OpenTelemetry
//
// Package trace/otel turns the events into OpenTelemetry spans, and
// trace/otel/otlp sends them over OTLP/HTTP; only those two depend on
// OpenTelemetry.
package trace
