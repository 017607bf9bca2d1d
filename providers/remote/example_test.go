package remote_test

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/providers/remote"
)

// The backend here is this test binary, which serves a fake provider when
// started with AUTOAGENT_TEST_PROVIDER_BACKEND set; a real program names a
// backend binary with Options.Name or Options.Path.
func ExampleNew() {
	ctx := context.Background()
	p, err := remote.New(ctx, remote.Options{
		Path: os.Args[0],
		Env:  []string{"AUTOAGENT_TEST_PROVIDER_BACKEND=fake", "GORACE=atexit_sleep_ms=0"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer p.Close()

	resp, err := p.Complete(ctx, &llm.Request{Messages: []llm.Message{llm.UserText("hello")}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(p.Name(), "says:", resp.Message.Text())

	_, err = p.Complete(ctx, &llm.Request{Messages: []llm.Message{llm.UserText("fail")}})
	var pe *llm.ProviderError
	if errors.As(err, &pe) {
		fmt.Println("status", pe.Status, "retryable", pe.Retryable, "retry after", pe.RetryAfter)
	}
	// Output:
	// fake says: echo: hello
	// status 429 retryable true retry after 2.5s
}
