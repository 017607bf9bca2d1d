package openai_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/autoagent-go/autoagent/internal/fixturetest"
	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/providers/openai"
	"github.com/google/go-cmp/cmp"
)

// turn is what one recorded answer must parse into. Every value here was
// written by reading the recording, not by running the adapter.
type turn struct {
	text      string
	reasoning string
	// reasoningPrefix/Suffix/Len check a reasoning too long to quote.
	reasoningPrefix, reasoningSuffix string
	reasoningLen                     int
	calls                            []llm.ToolCall
	usage                            *llm.Usage
	finish                           llm.FinishReason
	model                            string
	id                               string
}

// toolResults are the results the recorded clients sent back, by tool.
var toolResults = map[string]string{"weather": "40 C", "add": "5", "multiply": "6"}

func call(id, name, args string) llm.ToolCall {
	return llm.ToolCall{ID: id, Name: name, Arguments: json.RawMessage(args)}
}

func usage(in, out, cached, total int64) *llm.Usage {
	return &llm.Usage{InputTokens: in, OutputTokens: out, CachedTokens: cached, TotalTokens: total}
}

const (
	gpt4o = "gpt-4o-2024-08-06"
	kimi  = "moonshotai/kimi-k2-instruct-0905"
	oss   = "openai/gpt-oss-20b"
)

// cassetteCases covers every OpenAI-family recording of the fantasy
// folder: each case replays both interactions, checks what the adapter
// parsed, and checks the requests it built (turn 2 from its own parsed turn
// 1 plus the tool results) against the recorded requests.
var cassetteCases = []struct {
	file   string
	stream bool
	turns  []turn
}{
	// Structured output: response_format json_schema (strict, named,
	// described), the answer the recorded JSON.
	{"fantasy/TestOpenAIObjectGeneration/openai-gpt-4o/simple_object.yaml", false, []turn{
		{text: `{"age":30,"city":"Paris","name":"Alice"}`, usage: usage(99, 13, 0, 112), finish: llm.FinishStop, model: gpt4o, id: "chatcmpl-DIgPnqB0gj71H6AVhLEHu4TX5IYn2"},
	}},
	{"fantasy/TestOpenAIObjectGeneration/openai-gpt-4o/simple_object_streaming.yaml", true, []turn{
		{text: `{"age":30,"city":"Paris","name":"Alice"}`, usage: usage(99, 13, 0, 112), finish: llm.FinishStop, model: gpt4o, id: "chatcmpl-DIgPoiOp8apP6QCFndXcGTivO3TuR"},
	}},
	{"fantasy/TestOpenAIObjectGeneration/openai-gpt-4o/complex_object.yaml", false, []turn{
		{text: `{"author":{"name":"J.R.R. Tolkien","nationality":"British"},"genres":["Fantasy","Adventure","Epic","High Fantasy"],"published_year":1954,"title":"The Lord of the Rings"}`,
			usage: usage(160, 43, 0, 203), finish: llm.FinishStop, model: gpt4o, id: "chatcmpl-DIgPpnnBOUcrX4LrD5A74X9krJj97"},
	}},
	{"fantasy/TestOpenAIObjectGeneration/openai-gpt-4o/complex_object_streaming.yaml", true, []turn{
		{text: `{"author":{"name":"J.R.R. Tolkien","nationality":"British"},"genres":["Fantasy","Adventure","High Fantasy","Epic","Classic"],"published_year":1954,"title":"The Lord of the Rings"}`,
			usage: usage(160, 45, 0, 205), finish: llm.FinishStop, model: gpt4o, id: "chatcmpl-DIgPqZDSLdYbzqyXn54iajmnPPss9"},
	}},
	{"fantasy/TestOpenAICommon/openai-gpt-4o/simple.yaml", false, []turn{
		{text: "Oi!", usage: usage(20, 2, 0, 22), finish: llm.FinishStop, model: gpt4o, id: "chatcmpl-DuLdCrhIZ5WekmJNOuiNyelYjQqZk"},
	}},
	{"fantasy/TestOpenAICommon/openai-gpt-4o/simple_streaming.yaml", true, []turn{
		{text: "Olá!", usage: usage(20, 2, 0, 22), finish: llm.FinishStop, model: gpt4o, id: "chatcmpl-DuLdCoxuLDs8HRMlOuz0Bi4wgi4XJ"},
	}},
	{"fantasy/TestOpenAICommon/openai-gpt-4o/tool.yaml", false, []turn{
		{calls: []llm.ToolCall{call("call_IUonKM9GCNis5eMRHuusMqoy", "weather", `{"location":"Florence, Italy"}`)},
			usage: usage(61, 16, 0, 77), finish: llm.FinishToolCalls, model: gpt4o, id: "chatcmpl-DuLdFsxvqE5UB68GmaA3Q8Q8xWTTt"},
		{text: "The weather in Florence, Italy is currently 40°C.", usage: usage(86, 13, 0, 99), finish: llm.FinishStop, model: gpt4o, id: "chatcmpl-DuLdHv2zvb8aazm4Y6RlHu7gNpQs9"},
	}},
	{"fantasy/TestOpenAICommon/openai-gpt-4o/tool_streaming.yaml", true, []turn{
		{calls: []llm.ToolCall{call("call_7kE4IjtnwXcGbX6hDM7xFu8T", "weather", `{"location":"Florence, Italy"}`)},
			usage: usage(61, 16, 0, 77), finish: llm.FinishToolCalls, model: gpt4o, id: "chatcmpl-DuLdInI48CUMPbcraGuxW2KFhK3CM"},
		{text: "The current temperature in Florence, Italy is 40°C.", usage: usage(86, 13, 0, 99), finish: llm.FinishStop, model: gpt4o, id: "chatcmpl-DuLdJCsSSbBBJ5FZPFMNj2owr3Fhr"},
	}},
	{"fantasy/TestOpenAICommon/openai-gpt-4o/multi_tool.yaml", false, []turn{
		{calls: []llm.ToolCall{
			call("call_fifE5poZ3dg3JDUKGFi48NGq", "add", `{"a": 2, "b": 3}`),
			call("call_cvvIly4eGLZUYOMhAviT8jAF", "multiply", `{"a": 2, "b": 3}`),
		}, usage: usage(110, 50, 0, 160), finish: llm.FinishToolCalls, model: gpt4o, id: "chatcmpl-DuLdJw8LrXaHfxHUWoGkO4mQLLtEk"},
		{text: "The result of adding 2 and 3 is 5, and the result of multiplying 2 and 3 is 6.", usage: usage(176, 28, 0, 204), finish: llm.FinishStop, model: gpt4o, id: "chatcmpl-DuLdL7Zz4iHqgl5WrFxQFnJ1CvSsK"},
	}},
	{"fantasy/TestOpenAICommon/openai-gpt-4o/multi_tool_streaming.yaml", true, []turn{
		{calls: []llm.ToolCall{
			call("call_ehIWdjL1abZk1h8FWGLQ0Hie", "add", `{"a": 2, "b": 3}`),
			call("call_fBSgA47J5VeONggizTIvl7AH", "multiply", `{"a": 2, "b": 3}`),
		}, usage: usage(106, 50, 0, 156), finish: llm.FinishToolCalls, model: gpt4o, id: "chatcmpl-DuLdMEdkw5VsZSxKY3i9G934hT7LM"},
		{text: "The sum of 2 and 3 is 5, and the product is 6.", usage: usage(172, 20, 0, 192), finish: llm.FinishStop, model: gpt4o, id: "chatcmpl-DuLdNvsdmTNPbya2tqjr8GbYubTqm"},
	}},
	{"fantasy/TestOpenAICompatibleCommon/groq-kimi-k2/simple.yaml", false, []turn{
		{text: "Olá!", usage: usage(20, 4, 0, 24), finish: llm.FinishStop, model: kimi, id: "chatcmpl-6a0f3262-12b3-44b8-8253-8c1cad4415d5"},
	}},
	{"fantasy/TestOpenAICompatibleCommon/groq-kimi-k2/simple_streaming.yaml", true, []turn{
		{text: "Olá!", usage: usage(20, 4, 0, 24), finish: llm.FinishStop, model: kimi},
	}},
	{"fantasy/TestOpenAICompatibleCommon/groq-kimi-k2/tool.yaml", false, []turn{
		{text: "I'll check the weather in Florence, Italy for you.",
			calls: []llm.ToolCall{call("functions.weather:0", "weather", `{"location":"Florence,Italy"}`)},
			usage: usage(93, 32, 0, 125), finish: llm.FinishToolCalls, model: kimi, id: "chatcmpl-be641f72-2714-47dd-8b4f-522e8134fe11"},
		{text: "The current temperature in Florence, Italy is 40°C.", usage: usage(143, 13, 0, 156), finish: llm.FinishStop, model: kimi, id: "chatcmpl-7a679b99-7eeb-4a98-ac30-c48297ee855f"},
	}},
	{"fantasy/TestOpenAICompatibleCommon/groq-kimi-k2/tool_streaming.yaml", true, []turn{
		{text: "I'll check the weather in Florence, Italy for you.",
			calls: []llm.ToolCall{call("functions.weather:0", "weather", `{"location":"Florence,Italy"}`)},
			usage: usage(93, 32, 0, 125), finish: llm.FinishToolCalls, model: kimi, id: "chatcmpl-00a93bf0-be50-4f2a-a2fa-7729472d1b2d"},
		{text: "The current temperature in Florence, Italy is 40°C.", usage: usage(143, 13, 0, 156), finish: llm.FinishStop, model: kimi},
	}},
	{"fantasy/TestOpenAICompatibleCommon/groq-kimi-k2/multi_tool.yaml", false, []turn{
		{text: "I'll add and multiply 2 and 3 for you.",
			calls: []llm.ToolCall{
				call("functions.add:0", "add", `{"a":2,"b":3}`),
				call("functions.multiply:1", "multiply", `{"a":2,"b":3}`),
			}, usage: usage(205, 53, 0, 258), finish: llm.FinishToolCalls, model: kimi, id: "chatcmpl-062b781b-b680-460e-b8c9-ec1d8fce6df9"},
		{text: "Here are the results:\n- Addition: 2 + 3 = **5**\n- Multiplication: 2 × 3 = **6**", usage: usage(295, 31, 0, 326), finish: llm.FinishStop, model: kimi, id: "chatcmpl-30fc98d9-2d82-4085-b639-2709664bc6c3"},
	}},
	{"fantasy/TestOpenAICompatibleCommon/groq-kimi-k2/multi_tool_streaming.yaml", true, []turn{
		{text: "I'll perform both addition and multiplication on the numbers 2 and 3 for you.",
			calls: []llm.ToolCall{
				call("functions.add:0", "add", `{"a":2,"b":3}`),
				call("functions.multiply:1", "multiply", `{"a":2,"b":3}`),
			}, usage: usage(201, 58, 0, 259), finish: llm.FinishToolCalls, model: kimi},
		{text: "Here are the results:\n- Addition: 2 + 3 = 5\n- Multiplication: 2 × 3 = 6", usage: usage(296, 30, 0, 326), finish: llm.FinishStop, model: kimi},
	}},
	{"fantasy/TestOpenAICompatibleThinking/llama-cpp-gpt-oss/thinking.yaml", false, []turn{
		{reasoning: `The user asks: "What's the weather in Florence, Italy?" We can use the weather function. So call the function.`,
			calls: []llm.ToolCall{call("fdRvrwCxXKWGpydIdV3kNaiuirhnhEoL", "weather", `{"location":"Florence, Italy"}`)},
			usage: usage(139, 51, 0, 190), finish: llm.FinishToolCalls, model: oss, id: "chatcmpl-taknL1RlYNQ4ybq3l7O6u7Th97XVLXui"},
		{text: "Here’s the current weather in Florence, Italy:\n\n- **Temperature:** 40\u202f°C  \n- **Conditions:** Sunny with light wind  \n\nEnjoy your day! (If you need more details—humidity, wind speed, forecast, etc.—just let me know.)",
			usage: usage(206, 57, 0, 263), finish: llm.FinishStop, model: oss, id: "chatcmpl-cHcde6wDsUL9BxFHGP9m6nEMWNXzZR1I"},
	}},
	{"fantasy/TestOpenAICompatibleThinking/llama-cpp-gpt-oss/thinking-streaming.yaml", true, []turn{
		{reasoning: `We need to call function 'weather' with location "Florence, Italy".`,
			calls: []llm.ToolCall{call("1wNpqrejg1FCTjf6xq8JRCGKgWZO74AL", "weather", `{"location":"Florence, Italy"}`)},
			usage: usage(139, 42, 0, 181), finish: llm.FinishToolCalls, model: oss},
		{text: "The current weather in Florence, Italy is **40\u202f°C**.", usage: usage(197, 18, 0, 215), finish: llm.FinishStop, model: oss},
	}},
}

func TestReplayCassettes(t *testing.T) {
	for _, tc := range cassetteCases {
		t.Run(strings.TrimSuffix(strings.TrimPrefix(tc.file, "fantasy/"), ".yaml"), func(t *testing.T) {
			ex := fixturetest.Cassette(t, tc.file)
			if len(ex) != len(tc.turns) {
				t.Fatalf("recording has %d interactions, the case expects %d", len(ex), len(tc.turns))
			}
			srv := newReplayServer(t, fixturetest.Answers(ex)...)
			req, opts := requestFromRecorded(t, ex[0].Request.Body)
			opts.BaseURL = srv.URL + "/v1"
			opts.APIKey = "test-key"
			p, err := openai.New(opts)
			if err != nil {
				t.Fatal(err)
			}
			history := req.Messages
			for i, want := range tc.turns {
				req.Messages = history
				resp, _ := fixturetest.Send(t, p, req, tc.stream)
				checkResponse(t, resp, want)
				// The request we built must be the one the recorded client
				// sent: same messages (roles, tool-call ids, tool results,
				// reasoning echoed), tools, limits and stream options.
				if diff := cmp.Diff(normalizeBody(t, ex[i].Request.Body), normalizeBody(t, srv.Request(t, i).Body)); diff != "" {
					t.Errorf("turn %d request differs from the recording (-recorded +ours):\n%s", i+1, diff)
				}
				history = append(history, resp.Message)
				for _, c := range resp.Message.ToolCalls() {
					history = append(history, llm.ToolResultMessage(llm.ToolResult{CallID: c.ID, Name: c.Name, Content: toolResults[c.Name]}))
				}
			}
		})
	}
}

// requestFromRecorded rebuilds the llm.Request (and the options) that
// make the adapter send the recorded first request. Only the input is
// taken from the recording; the expected output is in the case table.
func requestFromRecorded(t *testing.T, body string) (*llm.Request, openai.Options) {
	t.Helper()
	var w struct {
		Model    string `json:"model"`
		Messages []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
		Tools []struct {
			Function struct {
				Name        string          `json:"name"`
				Description string          `json:"description"`
				Parameters  json.RawMessage `json:"parameters"`
			} `json:"function"`
		} `json:"tools"`
		ToolChoice     string `json:"tool_choice"`
		ResponseFormat *struct {
			JSONSchema struct {
				Name        string          `json:"name"`
				Strict      bool            `json:"strict"`
				Description string          `json:"description"`
				Schema      json.RawMessage `json:"schema"`
			} `json:"json_schema"`
			Type string `json:"type"`
		} `json:"response_format"`
		MaxTokens           int      `json:"max_tokens"`
		MaxCompletionTokens int      `json:"max_completion_tokens"`
		Temperature         *float64 `json:"temperature"`
		ReasoningEffort     string   `json:"reasoning_effort"`
	}
	if err := json.Unmarshal([]byte(body), &w); err != nil {
		t.Fatal(err)
	}
	req := &llm.Request{Model: w.Model, ToolChoice: llm.ToolChoice{Mode: w.ToolChoice}, MaxTokens: w.MaxTokens, Temperature: w.Temperature}
	var opts openai.Options
	if w.MaxCompletionTokens > 0 {
		req.MaxTokens = w.MaxCompletionTokens
		opts.MaxTokensField = openai.MaxCompletionTokens
	}
	if w.ReasoningEffort != "" {
		opts.ExtraBody = map[string]any{"reasoning_effort": w.ReasoningEffort}
	}
	for _, m := range w.Messages {
		req.Messages = append(req.Messages, llm.Message{Role: llm.Role(m.Role), Parts: []llm.Part{llm.TextPart(m.Content)}})
	}
	if rf := w.ResponseFormat; rf != nil {
		js := rf.JSONSchema
		req.ResponseFormat = &llm.ResponseFormat{Type: rf.Type, Name: js.Name, Description: js.Description, Schema: js.Schema, Strict: js.Strict}
	}
	for _, tl := range w.Tools {
		req.Tools = append(req.Tools, llm.ToolSpec{Name: tl.Function.Name, Description: tl.Function.Description, InputSchema: tl.Function.Parameters})
	}
	return req, opts
}

func checkResponse(t *testing.T, resp *llm.Response, want turn) {
	t.Helper()
	if got := resp.Message.Text(); got != want.text {
		t.Errorf("text = %q, want %q", got, want.text)
	}
	got := resp.Message.Reasoning()
	switch {
	case want.reasoningLen > 0:
		if !strings.HasPrefix(got, want.reasoningPrefix) || !strings.HasSuffix(got, want.reasoningSuffix) || len(got) != want.reasoningLen {
			t.Errorf("reasoning (%d bytes) = %q, want %d bytes from %q to %q", len(got), got, want.reasoningLen, want.reasoningPrefix, want.reasoningSuffix)
		}
	case got != want.reasoning:
		t.Errorf("reasoning = %q, want %q", got, want.reasoning)
	}
	gotCalls := resp.Message.ToolCalls()
	if len(gotCalls) != len(want.calls) {
		t.Fatalf("tool calls = %+v, want %d", gotCalls, len(want.calls))
	}
	for i, c := range gotCalls {
		w := want.calls[i]
		if c.ID != w.ID || c.Name != w.Name || !sameJSON(c.Arguments, w.Arguments) {
			t.Errorf("tool call %d = {%s %s %s}, want {%s %s %s}", i, c.ID, c.Name, c.Arguments, w.ID, w.Name, w.Arguments)
		}
	}
	if diff := cmp.Diff(want.usage, resp.Usage); diff != "" {
		t.Errorf("usage (-want +got):\n%s", diff)
	}
	if resp.FinishReason != want.finish {
		t.Errorf("finish reason = %q, want %q", resp.FinishReason, want.finish)
	}
	if resp.Model != want.model {
		t.Errorf("model = %q, want %q", resp.Model, want.model)
	}
	if want.id != "" && resp.ID != want.id {
		t.Errorf("id = %q, want %q", resp.ID, want.id)
	}
	if resp.Message.Role != llm.RoleAssistant {
		t.Errorf("role = %q, want assistant", resp.Message.Role)
	}
}

func sameJSON(a, b json.RawMessage) bool {
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return false
	}
	return cmp.Equal(va, vb)
}
