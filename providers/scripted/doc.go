// Package scripted is an [llm.Provider] that plays a model's part from a
// script, for tests, demos and offline runs: no network, no key, the same
// answers every time.
//
//	p := scripted.New(
//		scripted.Turn{ToolCalls: []llm.ToolCall{{ID: "c1", Name: "weather", Arguments: json.RawMessage(`{"city":"Oslo"}`)}}},
//		scripted.Turn{Text: "It is sunny in Oslo."},
//	)
//	agent := &loop.Agent{Provider: p, Tools: tools}
//	res, err := agent.Run(ctx, "Weather in Oslo?")
//	// p.Requests() holds what the "model" was sent at each turn.
//
// # Turns
//
// Each call to Complete or Stream plays the next [Turn]: its text,
// reasoning and tool calls become the assistant message, its Usage is
// reported as is (nil means "the provider reported nothing"; usage is never
// invented), and a Turn with Err fails the call instead. A call after the
// last turn fails with an error wrapping [ErrExhausted] that says how many
// turns the script had, so a test that loops more than intended fails
// loudly instead of hanging.
//
// By default turns are played in order across all calls (one script, one
// conversation). With [Options.PerConversation] the turn is chosen by the
// number of assistant messages already in the request, so one Provider
// serves any number of concurrent runs of the same script, and a resumed
// run continues where its transcript stands.
//
// # Streaming
//
// Stream is native: the text is yielded in deltas of [Options.ChunkSize]
// runes (reasoning likewise), each tool call as one event, then the done
// event. A turn with MidStream set yields its text and then fails, like a
// connection that dropped.
//
// # Script files
//
// [Load] and [Parse] read a script from JSON: either an array of turns, an
// object {"turns": [...]}, or JSONL with one turn object per line (blank
// lines and lines starting with # or // are skipped). A turn object:
//
//	{
//	  "text": "final answer or text beside tool calls",
//	  "reasoning": "optional thinking",
//	  "tool_calls": [
//	    {"id": "call_1", "name": "weather", "arguments": {"city": "Oslo"}},
//	    {"name": "broken", "arguments_raw": "{not json"}
//	  ],
//	  "usage": {"input_tokens": 120, "output_tokens": 14, "cached_tokens": 0},
//	  "finish_reason": "tool_calls",
//	  "model": "scripted-1",
//	  "error": {"status": 429, "code": "rate_limit_exceeded",
//	            "message": "slow down", "retryable": true, "retry_after_ms": 500},
//	  "mid_stream": false
//	}
//
// Every key is optional; unknown keys are refused with an error naming the
// turn (and line, for JSONL) so a typo never silently changes a demo. A tool
// call without "id" gets none: the agent loop assigns a run-unique one, as
// it does for providers that send none. "arguments" must be a JSON object;
// "arguments_raw" gives the exact bytes instead (to script a model that
// produces invalid JSON). total_tokens defaults to input + output.
//
// # Inspecting requests
//
// [Provider.Requests] returns every request received, in order. Requests are
// recorded as shallow copies: the message slice is the caller's, so treat it
// as read-only (the agent loop never modifies messages it has sent).
//
// A Provider is safe for concurrent use.
package scripted
