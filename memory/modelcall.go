package memory

import (
	"context"
	"errors"
	"fmt"

	"github.com/autoagent-go/autoagent/llm"
)

// errTruncated is the cause when the model's answer hit the token cap.
var errTruncated = errors.New("the answer was cut at the token cap")

// askModel makes one of the memory's own model calls: deterministic
// (temperature 0), no tools, bounded length. It returns the answer text and
// the usage the provider reported, also when it fails after answering.
func askModel(ctx context.Context, p llm.Provider, model, system, user string, maxTokens int, jsonMode bool) (string, llm.FinishReason, *llm.Usage, error) {
	zero := 0.0
	req := &llm.Request{
		Model:       model,
		Messages:    []llm.Message{llm.SystemText(system), llm.UserText(user)},
		ToolChoice:  llm.ToolChoice{Mode: llm.ToolChoiceNone},
		Temperature: &zero,
		MaxTokens:   maxTokens,
	}
	if jsonMode {
		req.ResponseFormat = &llm.ResponseFormat{Type: "json_object"}
	}
	resp, err := p.Complete(ctx, req)
	if err != nil {
		return "", "", nil, err
	}
	if resp == nil {
		return "", "", nil, fmt.Errorf("provider %q returned no response", llm.Name(p))
	}
	var usage *llm.Usage
	if resp.Usage != nil {
		u := resp.Usage.Normalize()
		usage = &u
	}
	return resp.Message.Text(), resp.FinishReason, usage, nil
}

// addUsage sums usages, keeping nil when nothing was reported.
func addUsage(a, b *llm.Usage) *llm.Usage {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	s := a.Add(*b)
	return &s
}
