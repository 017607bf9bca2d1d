package openai_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/providers/openai"
)

// A local OpenAI-compatible server (llama.cpp, Ollama, vLLM) needs only
// its base URL; an httptest server stands in for it here.
func ExampleCompatible() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"id":"c1","model":"local","choices":[{"index":0,"message":{"role":"assistant","content":"Olá!"},"finish_reason":"stop"}],
			"usage":{"prompt_tokens":20,"completion_tokens":2,"total_tokens":22,"prompt_tokens_details":{"cached_tokens":16}}}`)
	}))
	defer srv.Close()

	p, err := openai.Compatible(srv.URL+"/v1", openai.Options{Model: "local"})
	if err != nil {
		log.Fatal(err)
	}
	resp, err := p.Complete(context.Background(), &llm.Request{Messages: []llm.Message{llm.UserText("Say hi in Portuguese")}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(resp.Message.Text(), resp.FinishReason)
	fmt.Printf("input %d (cached %d), output %d\n", resp.Usage.InputTokens, resp.Usage.CachedTokens, resp.Usage.OutputTokens)
	// Output:
	// Olá! stop
	// input 20 (cached 16), output 2
}

// Streaming yields text deltas, each tool call once its arguments are
// complete, and a done event with the assembled answer.
func ExampleProvider_Stream() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, `data: {"choices":[{"index":0,"delta":{"content":"Checking"}}]}

data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"weather","arguments":"{\"city\":"}}]}}]}

data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"Oslo\"}"}}]}}]}

data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}

data: {"choices":[],"usage":{"prompt_tokens":50,"completion_tokens":9,"total_tokens":59}}

data: [DONE]

`)
	}))
	defer srv.Close()

	p, err := openai.New(openai.Options{BaseURL: srv.URL + "/v1", APIKey: "sk-test", Model: "gpt-4o"})
	if err != nil {
		log.Fatal(err)
	}
	req := &llm.Request{
		Messages: []llm.Message{llm.UserText("Weather in Oslo?")},
		Tools:    []llm.ToolSpec{{Name: "weather", Description: "Weather for a city."}},
	}
	for ev, err := range p.Stream(context.Background(), req) {
		if err != nil {
			log.Fatal(err)
		}
		switch ev.Type {
		case llm.StreamText:
			fmt.Println("text:", ev.Text)
		case llm.StreamToolCall:
			fmt.Println("call:", ev.ToolCall.Name, string(ev.ToolCall.Arguments))
		case llm.StreamDone:
			fmt.Println("done:", ev.Response.FinishReason, ev.Response.Usage.TotalTokens, "tokens")
		}
	}
	// Output:
	// text: Checking
	// call: weather {"city":"Oslo"}
	// done: tool_calls 59 tokens
}

// DeepSeek is a preset: its base URL and DEEPSEEK_API_KEY.
func ExampleDeepSeek() {
	p, err := openai.DeepSeek(openai.Options{Model: "deepseek-chat"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(p.Name())
	// Output: deepseek
}
