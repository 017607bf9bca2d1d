package gemini

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/autoagent-go/autoagent/llm"
)

// encodeJSON builds the request body for req and returns it canonicalised
// with the model it would call.
func encodeJSON(t *testing.T, opts Options, req *llm.Request) (string, string) {
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
	body, model, err := p.encode(req)
	if err != nil {
		t.Fatalf("encode: %v", err)
	}
	return canonical(t, body), model
}

func TestRequestMapping(t *testing.T) {
	weather := llm.ToolCall{ID: "c1", Name: "weather", Arguments: json.RawMessage(`{"city":"Rome"}`)}
	clock := llm.ToolCall{ID: "c2", Name: "clock", Arguments: json.RawMessage(`{}`)}
	budget := 0
	tests := []struct {
		name string
		opts Options
		req  llm.Request
		want string
	}{{
		name: "system instruction, roles, nothing else by default",
		req:  llm.Request{Messages: []llm.Message{llm.SystemText("Be terse."), llm.UserText("hi"), llm.AssistantText("hello"), llm.SystemText("French.")}},
		want: `{"systemInstruction":{"parts":[{"text":"Be terse.\n\nFrench."}]},
			"contents":[{"role":"user","parts":[{"text":"hi"}]},{"role":"model","parts":[{"text":"hello"}]}]}`,
	}, {
		name: "signatures at part level, results merged into one user turn with recovered names",
		req: llm.Request{Messages: []llm.Message{
			llm.UserText("weather and time?"),
			{Role: llm.RoleAssistant, Parts: []llm.Part{
				{Type: llm.PartReasoning, Text: "summary, not needed back"},
				{Type: llm.PartToolCall, ToolCall: &weather, Signature: "sig-A"},
				llm.ToolCallPart(clock),
			}},
			llm.ToolResultMessage(llm.ToolResult{CallID: "c1", Content: "sunny"}),
			llm.ToolResultMessage(llm.ToolResult{CallID: "c2", Name: "clock", Content: "broken", IsError: true}),
			llm.UserText("and tomorrow?"),
		}},
		want: `{"contents":[
			{"role":"user","parts":[{"text":"weather and time?"}]},
			{"role":"model","parts":[
				{"functionCall":{"id":"c1","name":"weather","args":{"city":"Rome"}},"thoughtSignature":"sig-A"},
				{"functionCall":{"id":"c2","name":"clock","args":{}}}]},
			{"role":"user","parts":[
				{"functionResponse":{"id":"c1","name":"weather","response":{"result":"sunny"}}},
				{"functionResponse":{"id":"c2","name":"clock","response":{"error":"broken"}}},
				{"text":"and tomorrow?"}]}]}`,
	}, {
		name: "signed text and thought parts go back as they came; an empty model turn keeps a part",
		req: llm.Request{Messages: []llm.Message{
			llm.UserText("a"),
			{Role: llm.RoleAssistant, Parts: []llm.Part{
				{Type: llm.PartReasoning, Text: "thinking", Signature: "sig-T"},
				{Type: llm.PartText, Text: "answer"},
				{Type: llm.PartText, Text: "", Signature: "sig-E"},
			}},
			llm.UserText("b"),
			{Role: llm.RoleAssistant},
			llm.UserText("c"),
		}},
		want: `{"contents":[
			{"role":"user","parts":[{"text":"a"}]},
			{"role":"model","parts":[{"text":"thinking","thought":true,"thoughtSignature":"sig-T"},{"text":"answer"},{"text":"","thoughtSignature":"sig-E"}]},
			{"role":"user","parts":[{"text":"b"}]},
			{"role":"model","parts":[{"text":""}]},
			{"role":"user","parts":[{"text":"c"}]}]}`,
	}, {
		name: "generation config, tool config by name, sanitised tools",
		opts: Options{MaxTokens: 100, ThinkingBudget: &budget},
		req: llm.Request{
			Model: "models/gemini-2.5-pro", Temperature: ptr(0.5), MaxTokens: 64,
			Messages:   []llm.Message{llm.UserText("q")},
			Tools:      []llm.ToolSpec{{Name: "t", Description: "d", InputSchema: json.RawMessage(`{"type":"object","properties":{"x":{"type":["string","null"]}},"additionalProperties":false}`)}},
			ToolChoice: llm.ToolChoice{Mode: llm.ToolChoiceTool, Name: "t"},
		},
		want: `{"contents":[{"role":"user","parts":[{"text":"q"}]}],
			"tools":[{"functionDeclarations":[{"name":"t","description":"d","parameters":{"type":"OBJECT","properties":{"x":{"type":"STRING","nullable":true}}}}]}],
			"toolConfig":{"functionCallingConfig":{"mode":"ANY","allowedFunctionNames":["t"]}},
			"generationConfig":{"temperature":0.5,"maxOutputTokens":64,"thinkingConfig":{"thinkingBudget":0}}}`,
	}, {
		name: "tool choice none; a tool without parameters",
		req: llm.Request{
			Messages:   []llm.Message{llm.UserText("q")},
			Tools:      []llm.ToolSpec{{Name: "now", Description: "the time", InputSchema: json.RawMessage(`{"type":"object","properties":{}}`)}},
			ToolChoice: llm.ToolChoice{Mode: llm.ToolChoiceNone},
		},
		want: `{"contents":[{"role":"user","parts":[{"text":"q"}]}],
			"tools":[{"functionDeclarations":[{"name":"now","description":"the time"}]}],
			"toolConfig":{"functionCallingConfig":{"mode":"NONE"}}}`,
	}, {
		name: "JSON response format with schema",
		req: llm.Request{
			Messages:       []llm.Message{llm.UserText("q")},
			ResponseFormat: &llm.ResponseFormat{Type: "json_schema", Schema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"integer"}},"additionalProperties":false}`)},
		},
		want: `{"contents":[{"role":"user","parts":[{"text":"q"}]}],
			"generationConfig":{"responseMimeType":"application/json","responseJsonSchema":{"type":"object","properties":{"a":{"type":"integer"}},"additionalProperties":false}}}`,
	}, {
		name: "thinking level and thought summaries, extra body merged",
		opts: Options{ThinkingLevel: "low", IncludeThoughts: true, ExtraBody: map[string]any{
			"generationConfig": map[string]any{"topK": 3},
			"safetySettings":   []any{map[string]any{"category": "HARM_CATEGORY_HARASSMENT", "threshold": "BLOCK_NONE"}},
		}},
		req: llm.Request{Messages: []llm.Message{llm.UserText("q")}},
		want: `{"contents":[{"role":"user","parts":[{"text":"q"}]}],
			"generationConfig":{"topK":3,"thinkingConfig":{"includeThoughts":true,"thinkingLevel":"low"}},
			"safetySettings":[{"category":"HARM_CATEGORY_HARASSMENT","threshold":"BLOCK_NONE"}]}`,
	}, {
		name: "images inline, from bytes and data URLs",
		req: llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{
			llm.TextPart("compare"),
			llm.ImagePart("image/jpeg", []byte{1, 2, 3}),
			{Type: llm.PartImage, Image: &llm.Image{URL: "data:image/png;base64,iVBORw0K"}},
		}}}},
		want: `{"contents":[{"role":"user","parts":[{"text":"compare"},
			{"inlineData":{"mimeType":"image/jpeg","data":"AQID"}},{"inlineData":{"mimeType":"image/png","data":"iVBORw0K"}}]}]}`,
	}, {
		name: "arguments that are not an object are sent as {}",
		req: llm.Request{Messages: []llm.Message{llm.UserText("q"),
			{Role: llm.RoleAssistant, Parts: []llm.Part{llm.ToolCallPart(llm.ToolCall{ID: "x", Name: "t", Arguments: json.RawMessage(`[1`)})}}}},
		want: `{"contents":[{"role":"user","parts":[{"text":"q"}]},{"role":"model","parts":[{"functionCall":{"id":"x","name":"t","args":{}}}]}]}`,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := encodeJSON(t, tc.opts, &tc.req)
			if want := canonical(t, json.RawMessage(tc.want)); got != want {
				t.Errorf("body:\n got %s\nwant %s", got, want)
			}
		})
	}
	if _, model := encodeJSON(t, Options{}, &llm.Request{Model: "models/gemini-2.5-pro"}); model != "gemini-2.5-pro" {
		t.Errorf("model = %q, want the models/ prefix stripped", model)
	}
}

func TestRequestErrors(t *testing.T) {
	tests := []struct {
		name string
		req  llm.Request
		want error
		msg  string
	}{
		{"no model", llm.Request{}, ErrNoModel, "Options.Model"},
		{"remote image", llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{{Type: llm.PartImage, Image: &llm.Image{URL: "https://example.com/a.png"}}}}}}, ErrInvalidRequest, "pass its bytes"},
		{"image without type", llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{llm.ImagePart("", []byte("plain text"))}}}}, ErrInvalidRequest, "MIME type"},
		{"result with no name and no call", llm.Request{Messages: []llm.Message{llm.ToolResultMessage(llm.ToolResult{CallID: "zz", Content: "x"})}}, ErrInvalidRequest, `call "zz"`},
		{"tool schema not JSON", llm.Request{Tools: []llm.ToolSpec{{Name: "bad", InputSchema: json.RawMessage(`{`)}}}, ErrInvalidRequest, `tool "bad"`},
		{"unknown tool choice", llm.Request{ToolChoice: llm.ToolChoice{Mode: "often"}}, ErrInvalidRequest, "often"},
		{"negative max tokens", llm.Request{MaxTokens: -3}, ErrInvalidRequest, "negative"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			opts := Options{APIKey: "k"}
			if tc.want != ErrNoModel {
				opts.Model = "m"
			}
			p, err := New(opts)
			if err != nil {
				t.Fatal(err)
			}
			_, _, err = p.encode(&tc.req)
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("err = %v, want %v mentioning %q", err, tc.want, tc.msg)
			}
		})
	}
	for _, opts := range []Options{{BaseURL: "no-scheme"}, {MaxTokens: -1}} {
		if _, err := New(opts); err == nil {
			t.Errorf("New(%+v) succeeded", opts)
		}
	}
}

// TestExtraBodyKeepsLargeIntegers: with ExtraBody set the body is decoded
// and re-encoded; a function call's integer argument above 2^53 must still
// go out digit for digit.
func TestExtraBodyKeepsLargeIntegers(t *testing.T) {
	p, err := New(Options{APIKey: "k", Model: "m", ExtraBody: map[string]any{"safetySettings": []any{}}})
	if err != nil {
		t.Fatal(err)
	}
	call := llm.ToolCall{ID: "c1", Name: "lookup", Arguments: json.RawMessage(`{"order_id":9007199254740993}`)}
	body, _, err := p.encode(&llm.Request{Messages: []llm.Message{
		llm.UserText("find it"),
		{Role: llm.RoleAssistant, Parts: []llm.Part{llm.ToolCallPart(call)}},
		llm.ToolResultMessage(llm.ToolResult{CallID: "c1", Name: "lookup", Content: "found"}),
	}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(body), `"order_id":9007199254740993`) || !strings.Contains(string(body), `"safetySettings":[]`) {
		t.Errorf("body = %s", body)
	}
}
