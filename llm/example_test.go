package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"time"

	"github.com/autoagent-go/autoagent/llm"
)

// shouting is a toy Provider: it answers the last user message in capitals
// and reports its usage.
type shouting struct{}

var _ llm.Provider = shouting{}

func (shouting) Complete(_ context.Context, req *llm.Request) (*llm.Response, error) {
	last := req.Messages[len(req.Messages)-1].Text()
	return &llm.Response{
		Message:      llm.AssistantText(fmt.Sprintf("%q, YOU SAID", last)),
		FinishReason: llm.FinishStop,
		Usage:        &llm.Usage{InputTokens: 12, OutputTokens: 5},
	}, nil
}

func (p shouting) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.StreamEvent, error] {
	return llm.StreamFromComplete(ctx, req, p.Complete)
}

func Example() {
	var provider llm.Provider = shouting{}
	msgs := []llm.Message{
		llm.SystemText("You are terse."),
		llm.UserText("hello"),
	}
	resp, err := provider.Complete(context.Background(), &llm.Request{Messages: msgs})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(resp.Message.Text())
	fmt.Println(resp.Usage.Normalize().TotalTokens, "tokens")

	// Messages round-trip through JSON: this is what run states and
	// recordings hold.
	b, _ := json.Marshal(resp.Message)
	fmt.Println(string(b))
	// Output:
	// "hello", YOU SAID
	// 17 tokens
	// {"role":"assistant","parts":[{"type":"text","text":"\"hello\", YOU SAID"}]}
}

func ExampleIsRetryable() {
	err := fmt.Errorf("step 3: %w", &llm.ProviderError{Provider: "openai", Status: 429, Retryable: true, RetryAfter: 2 * time.Second})
	var pe *llm.ProviderError
	if llm.IsRetryable(err) && errors.As(err, &pe) {
		fmt.Println("retry in", pe.RetryAfter, "after:", pe)
	}
	// Output:
	// retry in 2s after: llm: openai returned HTTP 429
}
