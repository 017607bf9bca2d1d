// Package llm is the shared vocabulary of autoagent: messages and their parts,
// tool calls and tool specifications, requests and responses, token usage,
// stream events, the [Provider] interface every model back-end implements, and
// the typed [ProviderError].
//
// It imports nothing else from this module, so every other package (the loop,
// tools, providers, memory, tracing) can depend on it without cycles.
//
//	msgs := []llm.Message{
//		llm.SystemText("You are terse."),
//		llm.UserText("What is 2+2?"),
//	}
//	resp, err := provider.Complete(ctx, &llm.Request{Messages: msgs})
//	if err != nil {
//		var pe *llm.ProviderError
//		if errors.As(err, &pe) && pe.Retryable {
//			// back off and try later
//		}
//		return err
//	}
//	fmt.Println(resp.Message.Text())
//
// # Messages
//
// A [Message] has a [Role] and an ordered list of [Part]s. A part is text,
// an image, a tool call (assistant messages), a tool result (tool messages)
// or reasoning (a model's thinking, kept so it can be sent back unchanged to
// providers that require it). Messages round-trip through JSON without loss,
// which is what makes run state, checkpoints and recordings possible.
//
// # Usage
//
// [Usage] is what the provider reported, never an estimate. A response whose
// server reported nothing has a nil Usage. CachedTokens is always a subset of
// InputTokens, whatever the provider's own convention.
package llm
