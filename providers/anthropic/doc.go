// Package anthropic is an [llm.Provider] for Anthropic's Messages API,
// spoken directly over net/http.
//
//	p, err := anthropic.New(anthropic.Options{Model: "claude-sonnet-4-20250514"}) // key from ANTHROPIC_API_KEY
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
//	fmt.Println(resp.Message.Text(), resp.Usage.InputTokens)
//
// # Requests
//
// System messages, wherever they are in the history, are joined into the
// top-level system prompt. Tool results become tool_result blocks, and the
// results of one assistant turn travel in one user message, as the API
// requires. Images are sent inline (bytes or data: URLs, base64) or as URL
// sources. max_tokens, which the API requires, defaults to
// [DefaultMaxTokens]. A ResponseFormat appends an instruction to answer
// with a single JSON object (and the schema, when given) to the system
// prompt, since the API has no such field. Options.ExtraBody is deep-merged
// into every body for fields this package does not model.
//
// # Thinking
//
// Options.ThinkingBudget turns on extended thinking. Thinking arrives as
// reasoning parts (StreamReasoning deltas when streaming) carrying the
// block's signature, and redacted_thinking as a reasoning part with
// Redacted set. Append the response's Message to the history unchanged: the
// next request sends every thinking block back exactly as received, which
// the API requires in tool-use turns. Reasoning without a signature (from
// another provider) is left out, since the API would reject it.
//
// # Prompt caching
//
// With Options.PromptCaching, cache_control breakpoints are placed after
// the tool definitions, after the system prompt and at the end of the
// conversation, so each turn reads the previous turn's prefix from the
// cache. Usage.CachedTokens reports the cache reads; Anthropic counts
// cache reads and writes beside input_tokens, and this package folds both
// into Usage.InputTokens so that CachedTokens is a subset of it, as with
// every provider.
//
// # Errors, retries and streams
//
// Failures are *llm.ProviderError with the HTTP status, Anthropic's error
// type as Code (overloaded_error, rate_limit_error, ...), the request-id
// header and Retryable. 429, 5xx, 529 overloaded and dropped connections
// are retried (Options.MaxRetries) with exponential backoff and jitter,
// honouring Retry-After; an x-should-retry header of true or false
// overrides the status. A stream is retried only before it opens; an error
// event inside a stream, a stream that ends before message_stop, one that
// stays silent for Options.StreamIdleTimeout and a broken connection each
// end the stream with one error (the latter three wrap
// [llm.ErrIncompleteStream]). Cancelling the context or leaving the loop
// early closes the connection; no goroutine is left behind.
package anthropic
