package llm

// FinishReason says why the model stopped, normalised across providers.
type FinishReason string

// The normalised finish reasons.
const (
	FinishStop          FinishReason = "stop"
	FinishToolCalls     FinishReason = "tool_calls"
	FinishLength        FinishReason = "length"
	FinishContentFilter FinishReason = "content_filter"
	FinishOther         FinishReason = "other"
)

// Response is a model's answer to a [Request].
type Response struct {
	// Message is the assistant message: text, reasoning and tool calls, in
	// the order the model produced them. Append it to the history unchanged:
	// it carries the signatures some providers require back.
	Message Message `json:"message"`
	// Usage is what the provider reported; nil when it reported nothing.
	Usage *Usage `json:"usage,omitempty"`
	// FinishReason is the normalised reason the model stopped.
	FinishReason FinishReason `json:"finish_reason,omitempty"`
	// Model is the model that answered, as the provider named it.
	Model string `json:"model,omitempty"`
	// ID is the provider's response id, when it sends one.
	ID string `json:"id,omitempty"`
}

// Usage counts the tokens of one or more model calls, as reported by the
// provider.
//
// CachedTokens is the part of InputTokens served from the provider's prompt
// cache: always a subset of InputTokens, never added to TotalTokens.
// (Anthropic reports cache reads beside the input; its adapter folds them in.)
type Usage struct {
	InputTokens  int64 `json:"input_tokens"`
	OutputTokens int64 `json:"output_tokens"`
	CachedTokens int64 `json:"cached_tokens"`
	TotalTokens  int64 `json:"total_tokens"`
}

// Add returns the sum of u and v.
func (u Usage) Add(v Usage) Usage {
	return Usage{
		InputTokens:  u.InputTokens + v.InputTokens,
		OutputTokens: u.OutputTokens + v.OutputTokens,
		CachedTokens: u.CachedTokens + v.CachedTokens,
		TotalTokens:  u.TotalTokens + v.TotalTokens,
	}
}

// CacheHitRatio returns CachedTokens/InputTokens, or 0 when no input was counted.
func (u Usage) CacheHitRatio() float64 {
	if u.InputTokens <= 0 {
		return 0
	}
	return float64(u.CachedTokens) / float64(u.InputTokens)
}

// Normalize fills TotalTokens from input and output when the provider did
// not send it, and returns the result.
func (u Usage) Normalize() Usage {
	if u.TotalTokens == 0 {
		u.TotalTokens = u.InputTokens + u.OutputTokens
	}
	return u
}
