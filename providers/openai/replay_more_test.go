package openai_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/autoagent-go/autoagent/internal/fixturetest"
	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/providers/openai"
	"github.com/google/go-cmp/cmp"
)

// weatherRequest is the question behind the vercel-ai recordings, which
// keep only the responses.
func weatherRequest(model string) *llm.Request {
	return &llm.Request{
		Model:    model,
		Messages: []llm.Message{llm.UserText("What is the weather in San Francisco?")},
		Tools: []llm.ToolSpec{{Name: "weather", Description: "Get the weather in a location",
			InputSchema: []byte(`{"type":"object","properties":{"location":{"type":"string"}},"required":["location"]}`)}},
	}
}

// TestReplayVercelAI covers the OpenAI-family recordings of the vercel-ai
// folder: DeepSeek's reasoning and tool-call streams (re-framed as SSE
// with a closing [DONE], as the folder's README says), DeepSeek's
// non-streamed tool call, and Groq's one-delta tool call.
func TestReplayVercelAI(t *testing.T) {
	sse := http.Header{"Content-Type": {"text/event-stream"}}
	tests := []struct {
		name    string
		body    func(t *testing.T) string
		header  http.Header
		stream  bool
		preset  func(openai.Options) (*openai.Provider, error)
		want    turn
		wantReq func(t *testing.T, body map[string]any)
	}{
		{
			name: "deepseek reasoning stream",
			body: func(t *testing.T) string {
				return chunksAsSSE(t, "vercel-ai/deepseek_src_chat___fixtures___deepseek-reasoning.chunks.txt")
			},
			header: sse, stream: true, preset: openai.DeepSeek,
			want: turn{text: `The word "strawberry" contains three "r"s.`,
				reasoningPrefix: `We need to count the number of the letter "r" in the word "strawberry".`,
				reasoningSuffix: "\n\nThus, the answer is 3.", reasoningLen: 606,
				usage: usage(18, 219, 0, 237), finish: llm.FinishStop, model: "deepseek-reasoner", id: "cac7192e-e619-40c6-96b0-ed4276bc03ac"},
		},
		{
			name: "deepseek tool-call stream",
			body: func(t *testing.T) string {
				return chunksAsSSE(t, "vercel-ai/deepseek_src_chat___fixtures___deepseek-tool-call.chunks.txt")
			},
			header: sse, stream: true, preset: openai.DeepSeek,
			want: turn{reasoning: `The user is asking for the weather in San Francisco. I need to use the weather tool to get this information. Let me invoke the weather tool with the location parameter set to "San Francisco".`,
				calls: []llm.ToolCall{call("call_00_ioIn7yN9p1ZOMNpDLwd4MgAF", "weather", `{"location": "San Francisco"}`)},
				usage: usage(339, 83, 320, 422), finish: llm.FinishToolCalls, model: "deepseek-reasoner", id: "cca85624-4056-401f-b220-d77601d1f70d"},
		},
		{
			name: "deepseek tool call",
			body: func(t *testing.T) string {
				return fixturetest.ReadFile(t, "vercel-ai/deepseek_src_chat___fixtures___deepseek-tool-call.json")
			},
			preset: openai.DeepSeek,
			want: turn{reasoning: `The user is asking for the weather in San Francisco. I have a weather tool available that can get weather information for a location. I should use this tool with the location parameter set to "San Francisco". Let me call the weather function.`,
				calls: []llm.ToolCall{call("call_00_9V0vrf86Pc9aelHCJMZqnJBo", "weather", `{"location": "San Francisco"}`)},
				usage: usage(339, 92, 320, 431), finish: llm.FinishToolCalls, model: "deepseek-reasoner", id: "7a630f5b-b7e6-4878-82f8-d77db164d42b"},
		},
		{
			name: "groq tool-call stream",
			body: func(t *testing.T) string {
				return chunksAsSSE(t, "vercel-ai/groq_src___fixtures___groq-tool-call.chunks.txt")
			},
			header: sse, stream: true, preset: openai.Groq,
			want: turn{calls: []llm.ToolCall{call("tk85n1k4m", "weather", `{}`)},
				usage: usage(210, 15, 0, 225), finish: llm.FinishToolCalls, model: "llama-3.3-70b-versatile", id: "chatcmpl-b610d559-f156-4aca-8827-24b4fe6af54f"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newReplayServer(t, fixturetest.Answer{Header: tt.header, Body: tt.body(t)})
			p, err := tt.preset(openai.Options{BaseURL: srv.URL + "/v1", APIKey: "k"})
			if err != nil {
				t.Fatal(err)
			}
			resp, _ := fixturetest.Send(t, p, weatherRequest(tt.want.model), tt.stream)
			checkResponse(t, resp, tt.want)
		})
	}
}

// TestReplayDeepSeekToolTurnEchoesReasoning sends the recorded DeepSeek
// tool call back with its result: DeepSeek's thinking mode answers 400
// unless the reasoning_content of a turn that called tools is sent back.
func TestReplayDeepSeekToolTurnEchoesReasoning(t *testing.T) {
	first := fixturetest.ReadFile(t, "vercel-ai/deepseek_src_chat___fixtures___deepseek-tool-call.json")
	srv := newReplayServer(t, fixturetest.Answer{Body: first}, fixturetest.Answer{Body: first})
	p, err := openai.DeepSeek(openai.Options{BaseURL: srv.URL + "/v1", APIKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	req := weatherRequest("deepseek-reasoner")
	resp, err := p.Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	c := resp.Message.ToolCalls()[0]
	req.Messages = append(req.Messages, resp.Message, llm.ToolResultMessage(llm.ToolResult{CallID: c.ID, Name: c.Name, Content: "18 C"}))
	if _, err := p.Complete(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	msgs := normalizeBody(t, srv.Request(t, 1).Body)["messages"].([]any)
	if len(msgs) != 3 {
		t.Fatalf("turn 2 sent %d messages, want user, assistant, tool", len(msgs))
	}
	assistant, tool := msgs[1].(map[string]any), msgs[2].(map[string]any)
	wantAssistant := map[string]any{
		"role":              "assistant",
		"reasoning_content": `The user is asking for the weather in San Francisco. I have a weather tool available that can get weather information for a location. I should use this tool with the location parameter set to "San Francisco". Let me call the weather function.`,
		"tool_calls": []any{map[string]any{"id": "call_00_9V0vrf86Pc9aelHCJMZqnJBo", "type": "function",
			"function": map[string]any{"name": "weather", "arguments": map[string]any{"location": "San Francisco"}}}},
	}
	if diff := cmp.Diff(wantAssistant, assistant); diff != "" {
		t.Errorf("assistant message (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]any{"role": "tool", "tool_call_id": "call_00_9V0vrf86Pc9aelHCJMZqnJBo", "content": "18 C"}, tool); diff != "" {
		t.Errorf("tool message (-want +got):\n%s", diff)
	}
}

// TestReplayLangchaingo covers the two OpenAI httprr traces: a streamed
// answer (whose recorded request the adapter reproduces exactly, given
// max_completion_tokens) and a legacy function_call answer.
func TestReplayLangchaingo(t *testing.T) {
	t.Run("stream", func(t *testing.T) {
		ex := fixturetest.HTTPRR(t, "langchaingo/llms_openai_internal_openaiclient_testdata_TestClient_CreateChatCompletionStream.httprr")
		srv := newReplayServer(t, fixturetest.Answers(ex)...)
		req, opts := requestFromRecorded(t, ex[0].Request.Body)
		opts.BaseURL, opts.APIKey = srv.URL+"/v1", "test-api-key"
		p, err := openai.New(opts)
		if err != nil {
			t.Fatal(err)
		}
		resp, _ := fixturetest.Send(t, p, req, true)
		checkResponse(t, resp, turn{text: "1, 2, 3, 4, 5", usage: usage(14, 13, 0, 27), finish: llm.FinishStop,
			model: "gpt-3.5-turbo-0125", id: "chatcmpl-C6bjxzOr3Oz1rTiafksd6himIit3q"})
		if diff := cmp.Diff(normalizeBody(t, ex[0].Request.Body), normalizeBody(t, srv.Request(t, 0).Body)); diff != "" {
			t.Errorf("request differs from the recording (-recorded +ours):\n%s", diff)
		}
		if h := srv.Request(t, 0).Header.Get("Authorization"); h != "Bearer test-api-key" {
			t.Errorf("Authorization = %q", h)
		}
	})
	t.Run("legacy function_call", func(t *testing.T) {
		ex := fixturetest.HTTPRR(t, "langchaingo/llms_openai_internal_openaiclient_testdata_TestClient_FunctionCall.httprr")
		srv := newReplayServer(t, fixturetest.Answers(ex)...)
		p, err := openai.New(openai.Options{BaseURL: srv.URL + "/v1", APIKey: "k"})
		if err != nil {
			t.Fatal(err)
		}
		resp, err := p.Complete(context.Background(), &llm.Request{Model: "gpt-3.5-turbo", Messages: []llm.Message{llm.UserText("What's the weather like in Boston?")}})
		if err != nil {
			t.Fatal(err)
		}
		calls := resp.Message.ToolCalls()
		// The legacy form has no call id; one is made so the result can
		// be matched to the call.
		if len(calls) != 1 || calls[0].Name != "get_weather" || !sameJSON(calls[0].Arguments, []byte(`{"location":"Boston"}`)) || calls[0].ID == "" {
			t.Fatalf("calls = %+v", calls)
		}
		calls[0].ID = ""
		checkResponse(t, &llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{llm.ToolCallPart(calls[0])}},
			Usage: resp.Usage, FinishReason: resp.FinishReason, Model: resp.Model, ID: resp.ID},
			turn{calls: []llm.ToolCall{call("", "get_weather", `{"location":"Boston"}`)}, usage: usage(62, 14, 0, 76),
				finish: llm.FinishToolCalls, model: "gpt-3.5-turbo-0125", id: "chatcmpl-C6bkF43YPpt2nQKdjU5XrPT0JYIzS"})
	})
}

// TestReplayErrors maps recorded and hand-written error responses to
// *llm.ProviderError.
func TestReplayErrors(t *testing.T) {
	tests := []struct {
		name   string
		status int
		header http.Header
		body   func(t *testing.T) string
		want   llm.ProviderError
	}{
		{
			// Recorded body (vercel-ai); the status is the 400 OpenAI
			// sends with it.
			name:   "unsupported max_tokens",
			status: 400,
			header: http.Header{"X-Request-Id": {"req_2860"}},
			body: func(t *testing.T) string {
				return fixturetest.ReadFile(t, "vercel-ai/openai_src_chat___fixtures___reasoning-model-legacy-parameter-error.json")
			},
			want: llm.ProviderError{Provider: "openai", Status: 400, Code: "unsupported_parameter",
				Message: "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.", RequestID: "req_2860"},
		},
		{
			// Hand-written: no recording shows an OpenAI 429. Body shape
			// and headers as OpenAI documents them.
			name:   "429 with Retry-After",
			status: 429,
			header: http.Header{"Retry-After": {"20"}, "X-Request-Id": {"req_429"}},
			body: func(*testing.T) string {
				return `{"error":{"message":"Rate limit reached for gpt-4o","type":"requests","param":null,"code":"rate_limit_exceeded"}}`
			},
			want: llm.ProviderError{Provider: "openai", Status: 429, Code: "rate_limit_exceeded", Message: "Rate limit reached for gpt-4o",
				Retryable: true, RetryAfter: 20e9, RequestID: "req_429"},
		},
		{
			// Hand-written: no recording shows an exhausted quota.
			name:   "429 insufficient quota is final",
			status: 429,
			body: func(*testing.T) string {
				return `{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`
			},
			want: llm.ProviderError{Provider: "openai", Status: 429, Code: "insufficient_quota", Message: "You exceeded your current quota"},
		},
		{
			// Hand-written: no recording shows a 5xx.
			name:   "503",
			status: 503,
			body: func(*testing.T) string {
				return `{"error":{"message":"The server is overloaded","type":"server_error","param":null,"code":null}}`
			},
			want: llm.ProviderError{Provider: "openai", Status: 503, Code: "server_error", Message: "The server is overloaded", Retryable: true},
		},
		{
			// Hand-written: no recording carries x-should-retry; OpenAI's
			// own SDKs obey it over the status.
			name:   "503 with x-should-retry false is final",
			status: 503,
			header: http.Header{"X-Should-Retry": {"false"}},
			body: func(*testing.T) string {
				return `{"error":{"message":"The server is overloaded","type":"server_error","param":null,"code":null}}`
			},
			want: llm.ProviderError{Provider: "openai", Status: 503, Code: "server_error", Message: "The server is overloaded"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newReplayServer(t, fixturetest.Answer{Status: tt.status, Header: tt.header, Body: tt.body(t)})
			p, err := openai.New(openai.Options{BaseURL: srv.URL + "/v1", APIKey: "k", MaxRetries: -1})
			if err != nil {
				t.Fatal(err)
			}
			_, err = p.Complete(context.Background(), &llm.Request{Model: "o3", Messages: []llm.Message{llm.UserText("hi")}})
			var pe *llm.ProviderError
			if !errors.As(err, &pe) {
				t.Fatalf("err = %T %v, want *llm.ProviderError", err, err)
			}
			if diff := cmp.Diff(tt.want, *pe); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
