package anthropic

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/autoagent-go/autoagent/llm"
)

// encodeJSON builds the request body for req and returns it canonicalised.
func encodeJSON(t *testing.T, opts Options, req *llm.Request) string {
	t.Helper()
	if opts.APIKey == "" {
		opts.APIKey = "k"
	}
	if opts.Model == "" {
		opts.Model = "m"
	}
	p, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	body, err := p.encode(req, false)
	if err != nil {
		t.Fatalf("encode: %v", err)
	}
	return canonical(t, body)
}

func wantJSON(t *testing.T, s string) string { t.Helper(); return canonical(t, json.RawMessage(s)) }

func TestRequestMapping(t *testing.T) {
	weather := llm.ToolCall{ID: "toolu_1", Name: "weather", Arguments: json.RawMessage(`{"city":"Rome"}`)}
	clock := llm.ToolCall{ID: "toolu_2", Name: "clock", Arguments: json.RawMessage(`{}`)}
	tests := []struct {
		name string
		opts Options
		req  llm.Request
		want string
	}{{
		name: "system messages joined, default max_tokens",
		req: llm.Request{Messages: []llm.Message{
			llm.SystemText("Be terse."), llm.UserText("hi"), llm.SystemText("Answer in French."),
		}},
		want: `{"model":"m","max_tokens":4096,"system":[{"type":"text","text":"Be terse.\n\nAnswer in French."}],
			"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}`,
	}, {
		name: "parallel tool results grouped into one user message, then the user's text",
		req: llm.Request{Messages: []llm.Message{
			llm.UserText("weather and time?"),
			{Role: llm.RoleAssistant, Parts: []llm.Part{llm.TextPart(""), llm.ToolCallPart(weather), llm.ToolCallPart(clock)}},
			llm.ToolResultMessage(llm.ToolResult{CallID: "toolu_1", Name: "weather", Content: "sunny"}),
			llm.ToolResultMessage(llm.ToolResult{CallID: "toolu_2", Name: "clock", Content: "boom", IsError: true}),
			llm.UserText("thanks"),
		}},
		want: `{"model":"m","max_tokens":4096,"messages":[
			{"role":"user","content":[{"type":"text","text":"weather and time?"}]},
			{"role":"assistant","content":[
				{"type":"tool_use","id":"toolu_1","name":"weather","input":{"city":"Rome"}},
				{"type":"tool_use","id":"toolu_2","name":"clock","input":{}}]},
			{"role":"user","content":[
				{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"sunny"}]},
				{"type":"tool_result","tool_use_id":"toolu_2","content":[{"type":"text","text":"boom"}],"is_error":true},
				{"type":"text","text":"thanks"}]}]}`,
	}, {
		name: "thinking kept with its signature, redacted thinking as data, unsigned reasoning dropped",
		opts: Options{ThinkingBudget: 2000},
		req: llm.Request{Messages: []llm.Message{
			llm.UserText("q"),
			{Role: llm.RoleAssistant, Parts: []llm.Part{
				{Type: llm.PartReasoning, Text: "let me think", Signature: "sig-1"},
				{Type: llm.PartReasoning, Redacted: "opaque=="},
				{Type: llm.PartReasoning, Text: "from another provider"},
				llm.ToolCallPart(weather),
			}},
			llm.ToolResultMessage(llm.ToolResult{CallID: "toolu_1", Content: "sunny"}),
		}},
		want: `{"model":"m","max_tokens":4096,"thinking":{"type":"enabled","budget_tokens":2000},"messages":[
			{"role":"user","content":[{"type":"text","text":"q"}]},
			{"role":"assistant","content":[
				{"type":"thinking","thinking":"let me think","signature":"sig-1"},
				{"type":"redacted_thinking","data":"opaque=="},
				{"type":"tool_use","id":"toolu_1","name":"weather","input":{"city":"Rome"}}]},
			{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"sunny"}]}]}]}`,
	}, {
		name: "thinking budget above the default max_tokens raises the default",
		opts: Options{ThinkingBudget: 10000},
		req:  llm.Request{Messages: []llm.Message{llm.UserText("q")}},
		want: `{"model":"m","max_tokens":14096,"thinking":{"type":"enabled","budget_tokens":10000},
			"messages":[{"role":"user","content":[{"type":"text","text":"q"}]}]}`,
	}, {
		name: "prompt caching marks tools, system and the end of the conversation",
		opts: Options{PromptCaching: true},
		req: llm.Request{
			Messages: []llm.Message{llm.SystemText("sys"), llm.UserText("a"), llm.AssistantText("b"), llm.UserText("c")},
			Tools: []llm.ToolSpec{
				{Name: "t1", Description: "one", InputSchema: json.RawMessage(`{"type":"object"}`)},
				{Name: "t2", Description: "two"},
			},
		},
		want: `{"model":"m","max_tokens":4096,
			"system":[{"type":"text","text":"sys","cache_control":{"type":"ephemeral"}}],
			"tools":[{"name":"t1","description":"one","input_schema":{"type":"object"}},
				{"name":"t2","description":"two","input_schema":{"type":"object"},"cache_control":{"type":"ephemeral"}}],
			"messages":[{"role":"user","content":[{"type":"text","text":"a"}]},
				{"role":"assistant","content":[{"type":"text","text":"b"}]},
				{"role":"user","content":[{"type":"text","text":"c","cache_control":{"type":"ephemeral"}}]}]}`,
	}, {
		name: "a JSON schema is a forced answer tool when the request has no tools",
		req: llm.Request{
			Messages:       []llm.Message{llm.UserText("q")},
			ResponseFormat: &llm.ResponseFormat{Type: "json_schema", Name: "x", Schema: json.RawMessage(`{"type":"object"}`)},
		},
		want: `{"model":"m","max_tokens":4096,
			"messages":[{"role":"user","content":[{"type":"text","text":"q"}]}],
			"tools":[{"name":"x","description":"Give your final answer.","input_schema":{"type":"object"}}],
			"tool_choice":{"type":"tool","name":"x"}}`,
	}, {
		name: "beside tools, the answer tool is offered and the model told to answer through it",
		req: llm.Request{
			Messages:       []llm.Message{llm.UserText("q")},
			Tools:          []llm.ToolSpec{{Name: "look", Description: "Look.", InputSchema: json.RawMessage(`{"type":"object"}`)}},
			ResponseFormat: &llm.ResponseFormat{Type: "json_schema", Name: "x", Description: "The answer.", Schema: json.RawMessage(`{"type":"object"}`)},
		},
		want: `{"model":"m","max_tokens":4096,
			"system":[{"type":"text","text":"When you have your final answer, give it by calling the tool ` + "`x`" + ` with it as the input; do not write it as text."}],
			"messages":[{"role":"user","content":[{"type":"text","text":"q"}]}],
			"tools":[{"name":"look","description":"Look.","input_schema":{"type":"object"}},{"name":"x","description":"The answer.","input_schema":{"type":"object"}}]}`,
	}, {
		name: "a JSON object format is an instruction",
		req: llm.Request{
			Messages:       []llm.Message{llm.UserText("q")},
			ResponseFormat: &llm.ResponseFormat{Type: "json_object"},
		},
		want: `{"model":"m","max_tokens":4096,
			"system":[{"type":"text","text":"Respond with a single valid JSON object only — no markdown fences, no prose before or after."}],
			"messages":[{"role":"user","content":[{"type":"text","text":"q"}]}]}`,
	}, {
		name: "tool choice required, temperature, request model and max tokens win",
		opts: Options{MaxTokens: 50},
		req: llm.Request{
			Model: "claude-x", MaxTokens: 77, Temperature: ptr(0.2),
			Messages:   []llm.Message{llm.UserText("q")},
			Tools:      []llm.ToolSpec{{Name: "t", InputSchema: json.RawMessage(`{"type":"object"}`)}},
			ToolChoice: llm.ToolChoice{Mode: llm.ToolChoiceRequired},
		},
		want: `{"model":"claude-x","max_tokens":77,"temperature":0.2,
			"tools":[{"name":"t","input_schema":{"type":"object"}}],"tool_choice":{"type":"any"},
			"messages":[{"role":"user","content":[{"type":"text","text":"q"}]}]}`,
	}, {
		name: "tool choice by name and none",
		req: llm.Request{
			Messages:   []llm.Message{llm.UserText("q")},
			Tools:      []llm.ToolSpec{{Name: "t", InputSchema: json.RawMessage(`{"type":"object"}`)}},
			ToolChoice: llm.ToolChoice{Mode: llm.ToolChoiceTool, Name: "t"},
		},
		want: `{"model":"m","max_tokens":4096,"tools":[{"name":"t","input_schema":{"type":"object"}}],
			"tool_choice":{"type":"tool","name":"t"},"messages":[{"role":"user","content":[{"type":"text","text":"q"}]}]}`,
	}, {
		name: "invalid tool arguments are sent as an empty object",
		req: llm.Request{Messages: []llm.Message{
			llm.UserText("q"),
			{Role: llm.RoleAssistant, Parts: []llm.Part{llm.ToolCallPart(llm.ToolCall{ID: "x", Name: "t", Arguments: json.RawMessage(`{"a":`)})}},
		}},
		want: `{"model":"m","max_tokens":4096,"messages":[{"role":"user","content":[{"type":"text","text":"q"}]},
			{"role":"assistant","content":[{"type":"tool_use","id":"x","name":"t","input":{}}]}]}`,
	}, {
		name: "extra body is deep-merged",
		opts: Options{ExtraBody: map[string]any{"metadata": map[string]any{"user_id": "u1"}, "thinking": map[string]any{"budget_tokens": 3000}, "top_k": 5}},
		req:  llm.Request{Messages: []llm.Message{llm.UserText("q")}},
		want: `{"model":"m","max_tokens":4096,"metadata":{"user_id":"u1"},"thinking":{"budget_tokens":3000},"top_k":5,
			"messages":[{"role":"user","content":[{"type":"text","text":"q"}]}]}`,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := encodeJSON(t, tc.opts, &tc.req)
			if want := wantJSON(t, tc.want); got != want {
				t.Errorf("body:\n got %s\nwant %s", got, want)
			}
		})
	}
}

func TestRequestImages(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR")
	tests := []struct {
		name string
		img  llm.Image
		want string // the image block's source, or "error: <substring>"
	}{
		{"bytes with type", llm.Image{MIMEType: "image/jpeg", Data: []byte{1, 2, 3}}, `{"type":"base64","media_type":"image/jpeg","data":"AQID"}`},
		{"bytes, type sniffed", llm.Image{Data: png}, `{"type":"base64","media_type":"image/png","data":"iVBORw0KGgoAAAANSUhEUg=="}`},
		{"data URL", llm.Image{URL: "data:image/gif;base64,R0lG"}, `{"type":"base64","media_type":"image/gif","data":"R0lG"}`},
		{"remote URL", llm.Image{URL: "https://example.com/cat.png"}, `{"type":"url","url":"https://example.com/cat.png"}`},
		{"not an image", llm.Image{Data: []byte("hello world")}, "error: no image MIME type"},
		{"data URL not base64", llm.Image{URL: "data:image/png,abc"}, "error: not base64"},
		{"data URL bad payload", llm.Image{URL: "data:image/png;base64,@@@"}, "error: not valid base64"},
		{"unsupported scheme", llm.Image{URL: "ftp://x/y.png"}, "error: unsupported scheme"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			img := tc.img
			req := &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{llm.TextPart("what is it?"), {Type: llm.PartImage, Image: &img}}}}}
			p, _ := New(Options{APIKey: "k", Model: "m"})
			body, err := p.encode(req, false)
			if msg, isErr := strings.CutPrefix(tc.want, "error: "); isErr {
				if !errors.Is(err, ErrInvalidRequest) || !strings.Contains(err.Error(), msg) {
					t.Fatalf("err = %v, want ErrInvalidRequest mentioning %q", err, msg)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var r struct {
				Messages []struct {
					Content []struct {
						Type   string          `json:"type"`
						Source json.RawMessage `json:"source"`
					} `json:"content"`
				} `json:"messages"`
			}
			if err := json.Unmarshal(body, &r); err != nil {
				t.Fatal(err)
			}
			blk := r.Messages[0].Content[1]
			if blk.Type != "image" || canonical(t, blk.Source) != wantJSON(t, tc.want) {
				t.Errorf("block %s %s, want image %s", blk.Type, blk.Source, tc.want)
			}
		})
	}
}

func TestRequestErrors(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		req  llm.Request
		want error
		msg  string
	}{
		{"no model", Options{APIKey: "k"}, llm.Request{Messages: []llm.Message{llm.UserText("q")}}, ErrNoModel, "Options.Model"},
		{"unknown tool choice", Options{}, llm.Request{ToolChoice: llm.ToolChoice{Mode: "sometimes"}}, ErrInvalidRequest, "sometimes"},
		{"named choice without name", Options{}, llm.Request{ToolChoice: llm.ToolChoice{Mode: "tool"}}, ErrInvalidRequest, "needs a tool name"},
		{"max tokens under the thinking budget", Options{ThinkingBudget: 1000}, llm.Request{MaxTokens: 500}, ErrInvalidRequest, "must exceed the thinking budget"},
		{"negative max tokens", Options{}, llm.Request{MaxTokens: -1}, ErrInvalidRequest, "negative"},
		{"tool call in a user message", Options{}, llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{llm.ToolCallPart(llm.ToolCall{Name: "t"})}}}}, ErrInvalidRequest, "assistant message"},
		{"unknown role", Options{}, llm.Request{Messages: []llm.Message{{Role: "robot"}}}, ErrInvalidRequest, "robot"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			opts := tc.opts
			opts.APIKey = "k"
			if tc.want != ErrNoModel {
				opts.Model = "m"
			}
			p, err := New(opts)
			if err != nil {
				t.Fatal(err)
			}
			_, err = p.encode(&tc.req, false)
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("err = %v, want %v mentioning %q", err, tc.want, tc.msg)
			}
		})
	}
}

func TestOptionErrors(t *testing.T) {
	for _, opts := range []Options{
		{BaseURL: "localhost:8080"},
		{MaxTokens: -5},
		{ThinkingBudget: -1},
		{MaxTokens: 1000, ThinkingBudget: 1000},
	} {
		if _, err := New(opts); err == nil {
			t.Errorf("New(%+v) succeeded, want an error", opts)
		}
	}
}

// TestExtraBodyKeepsLargeIntegers: with ExtraBody set the body is decoded
// and re-encoded; a tool call's integer argument above 2^53 must still go
// out digit for digit.
func TestExtraBodyKeepsLargeIntegers(t *testing.T) {
	p, err := New(Options{APIKey: "k", Model: "m", ExtraBody: map[string]any{"top_k": 5}})
	if err != nil {
		t.Fatal(err)
	}
	call := llm.ToolCall{ID: "toolu_1", Name: "lookup", Arguments: json.RawMessage(`{"order_id":9007199254740993}`)}
	body, err := p.encode(&llm.Request{Messages: []llm.Message{
		llm.UserText("find it"),
		{Role: llm.RoleAssistant, Parts: []llm.Part{llm.ToolCallPart(call)}},
		llm.ToolResultMessage(llm.ToolResult{CallID: "toolu_1", Name: "lookup", Content: "found"}),
	}}, false)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(body), `"order_id":9007199254740993`) || !strings.Contains(string(body), `"top_k":5`) {
		t.Errorf("body = %s", body)
	}
}
