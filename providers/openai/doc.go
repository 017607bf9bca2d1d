// Package openai is the provider for OpenAI's Chat Completions API and for
// every server that speaks it: DeepSeek, Groq, Ollama, vLLM, llama.cpp,
// LM Studio, gateways.
//
//	p, err := openai.New(openai.Options{Model: "gpt-4o"}) // key from OPENAI_API_KEY
//	if err != nil {
//		log.Fatal(err)
//	}
//	resp, err := p.Complete(ctx, &llm.Request{Messages: []llm.Message{llm.UserText("Say hi")}})
//	if err != nil {
//		log.Fatal(err) // *llm.ProviderError: status, code, request id, retryable
//	}
//	fmt.Println(resp.Message.Text(), resp.Usage.InputTokens)
//
// # Presets
//
// [DeepSeek] (DEEPSEEK_API_KEY, https://api.deepseek.com), [Groq]
// (GROQ_API_KEY) and [Compatible] (any base URL, key optional) return the
// same Provider with other defaults; [Options] can override each of them.
//
// # What is sent
//
// Messages map to Chat Completions roles; images become image_url parts
// (bytes as base64 data URLs); tools become function tools; the tool
// choice and a JSON-schema response format are passed through. The length
// cap is sent as max_completion_tokens to the o1/o3/o4/gpt-5 families,
// which refuse max_tokens, and as max_tokens to everything else
// (Options.MaxTokensField overrides). Reasoning from earlier answers is
// sent back as reasoning_content (DeepSeek requires it for turns that
// called tools). Options.Headers and Options.ExtraBody (deep-merged last)
// reach fields this package does not model.
//
// # What is read
//
// Text, reasoning_content (or "reasoning"), tool calls (parallel ones
// included; streamed argument fragments are assembled by index, and each
// call is yielded as soon as the next begins or the choice finishes), the
// legacy function_call, the finish reason, and usage with cached prompt
// tokens from prompt_tokens_details.cached_tokens or DeepSeek's
// prompt_cache_hit_tokens; Groq's x_groq.usage is read when usage is
// absent. Fields the adapter does not need (OpenAI's obfuscation padding,
// llama.cpp's timings) are ignored. A response that reports no usage has a
// nil Usage.
//
// # Failures
//
// Errors are *llm.ProviderError. 408, 409, 429 and 5xx (but not 501/505),
// and dropped connections, are retried Options.MaxRetries times with
// exponential backoff and jitter, honouring Retry-After and retry-after-ms;
// a 429 for an exhausted quota (insufficient_quota) and other 4xx are not,
// and an x-should-retry header of true or false overrides the status.
// The API key is resolved at each request, and its absence is an error
// wrapping [ErrNoAPIKey] that names the environment variable. A stream that
// breaks, or ends without [DONE] or a finish reason, yields an error
// wrapping [llm.ErrIncompleteStream]; a stream silent for
// Options.StreamIdleTimeout is ended the same way. Cancelling the context
// or leaving the loop early closes the connection; no goroutine outlives
// the call.
package openai
