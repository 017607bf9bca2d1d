package anthropic_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/providers/anthropic"
)

// fakeAnthropic stands in for the API: a canned answer to any request.
func fakeAnthropic(contentType, body string) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", contentType)
		_, _ = io.WriteString(w, body)
	}))
}

func Example() {
	srv := fakeAnthropic("application/json", `{"id":"msg_1","type":"message","role":"assistant",
		"model":"claude-sonnet-4-20250514","content":[{"type":"text","text":"Olá!"}],"stop_reason":"end_turn",
		"usage":{"input_tokens":16,"cache_read_input_tokens":0,"output_tokens":4}}`)
	defer srv.Close()

	p, err := anthropic.New(anthropic.Options{
		APIKey:  "sk-ant-example", // or leave empty to read ANTHROPIC_API_KEY
		BaseURL: srv.URL,          // omit to talk to api.anthropic.com
		Model:   "claude-sonnet-4-20250514",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	resp, err := p.Complete(context.Background(), &llm.Request{Messages: []llm.Message{
		llm.SystemText("You are a helpful assistant"),
		llm.UserText("Say hi in Portuguese"),
	}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(resp.Message.Text(), resp.FinishReason, resp.Usage.InputTokens, resp.Usage.OutputTokens)
	// Output: Olá! stop 16 4
}

func ExampleProvider_Stream() {
	events := []string{
		`{"type":"message_start","message":{"id":"msg_2","model":"claude-sonnet-4-20250514","content":[],"usage":{"input_tokens":394,"output_tokens":1}}}`,
		`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"weather","input":{}}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":""}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"location\": \"Flor"}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"ence\"}"}}`,
		`{"type":"content_block_stop","index":0}`,
		`{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":40}}`,
		`{"type":"message_stop"}`,
	}
	var body strings.Builder
	for _, e := range events {
		fmt.Fprintf(&body, "data: %s\n\n", e)
	}
	srv := fakeAnthropic("text/event-stream", body.String())
	defer srv.Close()

	p, _ := anthropic.New(anthropic.Options{APIKey: "sk-ant-example", BaseURL: srv.URL, Model: "claude-sonnet-4-20250514"})
	req := &llm.Request{
		Messages: []llm.Message{llm.UserText("What's the weather in Florence?")},
		Tools: []llm.ToolSpec{{Name: "weather", Description: "Get the weather",
			InputSchema: []byte(`{"type":"object","properties":{"location":{"type":"string"}},"required":["location"]}`)}},
	}
	for ev, err := range p.Stream(context.Background(), req) {
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		switch ev.Type {
		case llm.StreamText:
			fmt.Print(ev.Text)
		case llm.StreamToolCall:
			fmt.Println("call", ev.ToolCall.ID, ev.ToolCall.Name, string(ev.ToolCall.Arguments))
		case llm.StreamDone:
			fmt.Println("done:", ev.Response.FinishReason, ev.Response.Usage.OutputTokens, "output tokens")
		}
	}
	// Output:
	// call toolu_1 weather {"location": "Florence"}
	// done: tool_calls 40 output tokens
}

func ExampleOptions_promptCaching() {
	// A long system prompt and tool list are read from Anthropic's prompt
	// cache on later turns; cache reads show in Usage.CachedTokens.
	srv := fakeAnthropic("application/json", `{"id":"msg_3","type":"message","model":"claude-sonnet-4-20250514",
		"content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn",
		"usage":{"input_tokens":12,"cache_creation_input_tokens":0,"cache_read_input_tokens":2048,"output_tokens":2}}`)
	defer srv.Close()

	p, _ := anthropic.New(anthropic.Options{APIKey: "sk-ant-example", BaseURL: srv.URL, Model: "claude-sonnet-4-20250514", PromptCaching: true})
	resp, err := p.Complete(context.Background(), &llm.Request{Messages: []llm.Message{
		llm.SystemText(strings.Repeat("A long, stable system prompt. ", 200)),
		llm.UserText("ready?"),
	}})
	if err != nil {
		fmt.Println(err)
		return
	}
	u := resp.Usage
	fmt.Printf("input %d (cached %d), hit ratio %.2f\n", u.InputTokens, u.CachedTokens, u.CacheHitRatio())
	// Output: input 2060 (cached 2048), hit ratio 0.99
}
