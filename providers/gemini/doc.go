// Package gemini is an [llm.Provider] for Google's Gemini API
// (generateContent and streamGenerateContent), spoken directly over
// net/http.
//
//	p, err := gemini.New(gemini.Options{Model: "gemini-2.5-flash"}) // key from GEMINI_API_KEY
//	if err != nil {
//		return err
//	}
//	resp, err := p.Complete(ctx, &llm.Request{Messages: []llm.Message{
//		llm.SystemText("You are terse."),
//		llm.UserText("Say hi in Portuguese"),
//	}})
//	if err != nil {
//		return err // *llm.ProviderError, ctx's error, or ErrNoAPIKey / ErrInvalidRequest
//	}
//	fmt.Println(resp.Message.Text())
//
// The API key travels in the x-goog-api-key header, never in the URL.
//
// # Requests
//
// System messages become the systemInstruction; assistant turns have role
// "model"; tool results become functionResponse parts of one user turn
// (consecutive results merged, the function name recovered from the call
// when the result lacks it, IsError sent as {"error": ...} instead of
// {"result": ...}). Images are sent as inline data (bytes or data: URLs);
// a remote image URL is refused with [ErrInvalidRequest], because Gemini's
// fileData only takes URIs of its own Files API. ToolChoice maps to
// toolConfig.functionCallingConfig, ResponseFormat to responseMimeType
// (and responseSchema). Options.ExtraBody is deep-merged into every body
// (safetySettings, cachedContent, topK, ...).
//
// Tool schemas are translated from JSON Schema to the OpenAPI subset
// Gemini accepts: $ref and $defs are inlined (recursion cut off),
// additionalProperties, $schema and other unsupported keywords dropped,
// "type": ["null", "string"] unions and null alternatives become nullable,
// arrays without items get string items, numeric enums move into the
// description, unsupported formats are dropped.
//
// # Tool calls and thought signatures
//
// Gemini sends no tool-call ids: each call gets a fresh id from
// [llm.NewCallID], unique within a run, which the function response then
// carries back. A thoughtSignature is kept in Part.Signature of the part
// it came on (usually the first function call) and sent back on that part;
// append the response's Message to the history unchanged. Thought
// summaries (Options.IncludeThoughts) arrive as reasoning parts and
// StreamReasoning deltas, never as answer text, and are not sent back
// unless signed. Gemini 3 streams a call's arguments as partialArgs
// (JSON-path pieces); they are assembled, and the call is yielded once
// complete.
//
// # Usage
//
// Usage.InputTokens is promptTokenCount (plus toolUsePromptTokenCount),
// CachedTokens is cachedContentTokenCount (a part of the input), and
// OutputTokens counts candidates and thoughts, since thinking is billed as
// output.
//
// # Errors, retries and streams
//
// Failures are *llm.ProviderError with the HTTP status and Google's status
// as Code (RESOURCE_EXHAUSTED, UNAVAILABLE, ...). 429, 5xx and dropped
// connections are retried (Options.MaxRetries) with exponential backoff
// and jitter, honouring Retry-After and the RetryInfo delay of the error
// body. A stream is retried only before it opens; an error chunk, a stream
// that ends before a finishReason, one that stays silent for
// Options.StreamIdleTimeout and a broken connection each end the stream
// with one error (the latter three wrap [llm.ErrIncompleteStream]).
// Cancelling the context or leaving the loop early closes the connection.
package gemini
