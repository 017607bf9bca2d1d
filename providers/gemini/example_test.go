package gemini_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/providers/gemini"
)

// fakeGemini stands in for the API: a canned answer to any request.
func fakeGemini(contentType, body string) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", contentType)
		_, _ = io.WriteString(w, body)
	}))
}

func Example() {
	srv := fakeGemini("application/json", `{"candidates":[{"content":{"role":"model","parts":[{"text":"Olá!"}]},"finishReason":"STOP"}],
		"usageMetadata":{"promptTokenCount":11,"candidatesTokenCount":2,"thoughtsTokenCount":24,"totalTokenCount":37},
		"modelVersion":"gemini-2.5-flash"}`)
	defer srv.Close()

	p, err := gemini.New(gemini.Options{
		APIKey:  "example-key", // or leave empty to read GEMINI_API_KEY
		BaseURL: srv.URL,       // omit to talk to the Gemini API
		Model:   "gemini-2.5-flash",
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
	u := resp.Usage
	fmt.Println(resp.Message.Text(), resp.FinishReason, u.InputTokens, u.OutputTokens, u.TotalTokens)
	// Output: Olá! stop 11 26 37
}

func ExampleProvider_Stream() {
	chunks := []string{
		`{"candidates":[{"content":{"role":"model","parts":[{"text":"Checking both cities.","thought":true}]}}]}`,
		`{"candidates":[{"content":{"role":"model","parts":[
			{"functionCall":{"name":"weather","args":{"city":"Paris"}},"thoughtSignature":"c2lnbmF0dXJl"},
			{"functionCall":{"name":"weather","args":{"city":"Rome"}}}]},"finishReason":"STOP"}],
			"usageMetadata":{"promptTokenCount":50,"candidatesTokenCount":20,"thoughtsTokenCount":30,"totalTokenCount":100}}`,
	}
	var body strings.Builder
	for _, c := range chunks {
		fmt.Fprintf(&body, "data: %s\r\n\r\n", strings.Join(strings.Fields(c), " "))
	}
	srv := fakeGemini("text/event-stream", body.String())
	defer srv.Close()

	p, _ := gemini.New(gemini.Options{APIKey: "example-key", BaseURL: srv.URL, Model: "gemini-2.5-flash", IncludeThoughts: true})
	req := &llm.Request{
		Messages: []llm.Message{llm.UserText("Weather in Paris and Rome?")},
		Tools: []llm.ToolSpec{{Name: "weather", Description: "Get the weather",
			InputSchema: []byte(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false}`)}},
	}
	var resp *llm.Response
	for ev, err := range p.Stream(context.Background(), req) {
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		switch ev.Type {
		case llm.StreamReasoning:
			fmt.Println("thinking:", ev.Text)
		case llm.StreamToolCall:
			fmt.Println("call", ev.ToolCall.Name, string(ev.ToolCall.Arguments))
		case llm.StreamDone:
			resp = ev.Response
		}
	}
	// The signature stays on the part it came with, to be sent back.
	for _, part := range resp.Message.Parts {
		fmt.Printf("%s signed=%v\n", part.Type, part.Signature != "")
	}
	fmt.Println(resp.FinishReason, resp.Usage.OutputTokens)
	// Output:
	// thinking: Checking both cities.
	// call weather {"city":"Paris"}
	// call weather {"city":"Rome"}
	// reasoning signed=false
	// tool_call signed=true
	// tool_call signed=false
	// tool_calls 50
}
