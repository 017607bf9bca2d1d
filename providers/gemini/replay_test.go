package gemini

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/autoagent-go/autoagent/internal/fixturetest"
	"github.com/autoagent-go/autoagent/llm"
	"github.com/google/go-cmp/cmp"
)

// wantTurn is what one recorded response must parse into. Every value was
// written by reading the recording, never by running the adapter.
type wantTurn struct {
	id        string
	text      string
	reasoning string
	// calls are compared by name and arguments; Gemini sends no ids, so
	// ids are checked for presence and uniqueness instead.
	calls []wantCall
	usage llm.Usage
	// finish is the normalised reason: Gemini says STOP after function
	// calls, which must come out as tool_calls.
	finish llm.FinishReason
}

type wantCall struct {
	name, args string
	// sigPrefix is the start of the part's thoughtSignature ("" for
	// none); the whole signature is checked against the one the
	// recording sends back.
	sigPrefix string
}

type replayCase struct {
	file     string
	stream   bool
	thinking bool
	// results answers each tool call of turn 1, by tool name.
	results map[string]string
	turns   []wantTurn
}

const flash = "gemini-2.5-flash"

// The tools of the fantasy recordings, written as this project's tool
// package generates schemas (JSON Schema with $schema and
// additionalProperties:false), so the replay also checks that the sanitiser
// turns them into exactly what the recorded requests sent.
var (
	weatherTool = llm.ToolSpec{
		Name: "weather", Description: "Get weather information for a location",
		InputSchema: json.RawMessage(`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"location":{"type":"string","description":"the city"}},"required":["location"],"additionalProperties":false}`),
	}
	addTool = llm.ToolSpec{
		Name: "add", Description: "Add two numbers",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"integer","description":"first number"},"b":{"type":"integer","description":"second number"}},"required":["a","b"],"additionalProperties":false}`),
	}
	multiplyTool = llm.ToolSpec{
		Name: "multiply", Description: "Multiply two numbers",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"integer","description":"first number"},"b":{"type":"integer","description":"second number"}},"required":["a","b"],"additionalProperties":false}`),
	}
)

var geminiCases = []replayCase{
	{
		file: "TestGoogleCommon/gemini-2.5-flash/simple.yaml",
		turns: []wantTurn{{
			id: "VgCzac2AGLOHz7IP2pOkkAI", text: "Olá!",
			usage:  llm.Usage{InputTokens: 11, OutputTokens: 2 + 24, TotalTokens: 37},
			finish: llm.FinishStop,
		}},
	},
	{
		file: "TestGoogleCommon/gemini-2.5-flash/simple_streaming.yaml", stream: true,
		turns: []wantTurn{{
			id: "VwCzabneCuzPz7IP0aL64A0", text: "Olá!",
			usage:  llm.Usage{InputTokens: 11, OutputTokens: 2 + 21, TotalTokens: 34},
			finish: llm.FinishStop,
		}},
	},
	{
		file:    "TestGoogleCommon/gemini-2.5-flash/tool.yaml",
		results: map[string]string{"weather": "40 C"},
		turns: []wantTurn{{
			id:     "WACzacOoAtThz7IPuNuJoQI",
			calls:  []wantCall{{name: "weather", args: `{"location":"Florence,Italy"}`, sigPrefix: "CvMBAb4+9vvZC/KtDBiEfP1WF"}},
			usage:  llm.Usage{InputTokens: 54, OutputTokens: 15 + 48, TotalTokens: 117},
			finish: llm.FinishToolCalls,
		}, {
			id: "WQCzaa2iA_Xpz7IP6oC2oQ8", text: "The weather in Florence, Italy is 40 C.",
			usage:  llm.Usage{InputTokens: 84, OutputTokens: 12, TotalTokens: 96},
			finish: llm.FinishStop,
		}},
	},
	{
		file: "TestGoogleCommon/gemini-2.5-flash/tool_streaming.yaml", stream: true,
		results: map[string]string{"weather": "40 C"},
		turns: []wantTurn{{
			id:     "WQCzaayhL8Xmz7IP-63dqQk",
			calls:  []wantCall{{name: "weather", args: `{"location":"Florence,Italy"}`, sigPrefix: "CiQBvj72+xCKZ6n2ewHIHg3n"}},
			usage:  llm.Usage{InputTokens: 54, OutputTokens: 15 + 43, TotalTokens: 112},
			finish: llm.FinishToolCalls,
		}, {
			id: "WgCzaZzmMLnoz7IP_czm6Q4", text: "The weather in Florence,Italy is 40 C.",
			usage:  llm.Usage{InputTokens: 127, OutputTokens: 12, TotalTokens: 139},
			finish: llm.FinishStop,
		}},
	},
	{
		file:    "TestGoogleCommon/gemini-2.5-flash/multi_tool.yaml",
		results: map[string]string{"add": "5", "multiply": "6"},
		turns: []wantTurn{{
			id: "WwCzadOqH-mtz7IP8_Se8Ak",
			calls: []wantCall{
				{name: "add", args: `{"a":2,"b":3}`, sigPrefix: "CuwBAb4+9vtZI+lrRvvljZUd"},
				{name: "multiply", args: `{"a":2,"b":3}`},
			},
			usage:  llm.Usage{InputTokens: 125, OutputTokens: 36 + 73, TotalTokens: 234},
			finish: llm.FinishToolCalls,
		}, {
			id: "XACzab6NJ-Hqz7IP6avj8Qs", text: "The sum of 2 and 3 is 5. The product of 2 and 3 is 6.",
			usage:  llm.Usage{InputTokens: 185, OutputTokens: 24, TotalTokens: 209},
			finish: llm.FinishStop,
		}},
	},
	{
		file: "TestGoogleCommon/gemini-2.5-flash/multi_tool_streaming.yaml", stream: true,
		results: map[string]string{"add": "5", "multiply": "6"},
		turns: []wantTurn{{
			id: "XQCzaYWvIqfRz7IPupTlyAk",
			calls: []wantCall{
				// Several functionCall parts in one chunk, keys in the
				// order the model wrote them.
				{name: "add", args: `{"b":3,"a":2}`, sigPrefix: "CloBvj72+4/aTlyeodvVsF6W"},
				{name: "multiply", args: `{"a":2,"b":3}`},
			},
			usage:  llm.Usage{InputTokens: 121, OutputTokens: 36 + 38, TotalTokens: 195},
			finish: llm.FinishToolCalls,
		}, {
			id: "XgCzaazDItHRz7IPmsmB4Qk", text: "The sum of 2 and 3 is 5. The product of 2 and 3 is 6.",
			usage:  llm.Usage{InputTokens: 218, OutputTokens: 22, TotalTokens: 240},
			finish: llm.FinishStop,
		}},
	},
	{
		file: "TestGoogleThinking/gemini-2.5-flash/thinking.yaml", thinking: true,
		results: map[string]string{"weather": "40 C"},
		turns: []wantTurn{{
			id:        "zACzaYXlFezjz7IPy5DMqQI",
			reasoning: "**Analyzing the Weather Query**\n\nOkay, so the user needs the weather for Florence, Italy. Simple enough. My initial assessment is that the `weather` tool is the right one to use here – that's the obvious call. The critical thing now is to format the request correctly. I need to make sure the `location` parameter is explicitly set to \"Florence, Italy.\" I'm mentally checking that the phrasing is precise and unambiguous. Now I need to actually execute that call to the `weather` tool. Time to get this user the information they need.\n",
			calls:     []wantCall{{name: "weather", args: `{"location":"Florence, Italy"}`, sigPrefix: "CpQCAb4+9vsbZAixhGYxpv51"}},
			usage:     llm.Usage{InputTokens: 54, OutputTokens: 15 + 54, TotalTokens: 123},
			finish:    llm.FinishToolCalls,
		}, {
			id: "zgCzaa2gDKPlz7IPwOnE8QE", text: "The weather in Florence, Italy is 40 C.",
			usage:  llm.Usage{InputTokens: 84, OutputTokens: 12, TotalTokens: 96},
			finish: llm.FinishStop,
		}},
	},
	{
		file: "TestGoogleThinking/gemini-2.5-flash/thinking-streaming.yaml", stream: true, thinking: true,
		results: map[string]string{"weather": "40 C"},
		turns: []wantTurn{{
			id:        "zwCzaYWfAbnoz7IPmc_m6Q4",
			reasoning: "**Determining the Weather Inquiry**\n\nI've pinpointed the user's intent: they want the weather conditions in Florence, Italy. My plan is clear – I'll activate the `weather` tool. I will set the `location` parameter to \"Florence, Italy\" to obtain the relevant weather data. The query seems straightforward and easily resolved.\n\n\n",
			calls:     []wantCall{{name: "weather", args: `{"location":"Florence, Italy"}`, sigPrefix: "CiQBvj72+y6VX8BA4jMLQJOJ"}},
			// The first chunk has no candidatesTokenCount; the last
			// chunk's totals are the answer's.
			usage:  llm.Usage{InputTokens: 54, OutputTokens: 14 + 62, TotalTokens: 130},
			finish: llm.FinishToolCalls,
		}, {
			id: "0ACzaenoJ4Hnz7IPzoP0gAw", text: "The weather in Florence, Italy is 40 C.",
			usage:  llm.Usage{InputTokens: 146, OutputTokens: 12, TotalTokens: 158},
			finish: llm.FinishStop,
		}},
	},
}

func TestReplayFantasy(t *testing.T) {
	for _, tc := range geminiCases {
		name := strings.TrimSuffix(strings.Replace(tc.file, "/gemini-2.5-flash/", "/", 1), ".yaml")
		t.Run(name, func(t *testing.T) {
			ex := fixturetest.Cassette(t, "fantasy/"+tc.file)
			if len(ex) != len(tc.turns) {
				t.Fatalf("cassette has %d interactions, test expects %d", len(ex), len(tc.turns))
			}
			srv := fixturetest.NewServer(t, fixturetest.Answers(ex)...)
			opts := Options{APIKey: "test-key", BaseURL: srv.URL + "/v1beta", Model: flash}
			if tc.thinking {
				budget := 128
				opts.ThinkingBudget, opts.IncludeThoughts = &budget, true
			} else {
				opts.MaxTokens = 4000
			}
			p, err := New(opts)
			if err != nil {
				t.Fatal(err)
			}

			system, prompt := recordedPrompts(t, []byte(ex[0].Request.Body))
			var tools []llm.ToolSpec
			switch {
			case tc.results["weather"] != "":
				tools = []llm.ToolSpec{weatherTool}
			case tc.results["add"] != "":
				tools = []llm.ToolSpec{addTool, multiplyTool}
			}
			history := []llm.Message{llm.SystemText(system), llm.UserText(prompt)}

			for turn, want := range tc.turns {
				req := &llm.Request{Messages: history, Tools: tools}
				resp := runTurn(t, p, req, tc.stream, want)

				got := srv.Request(t, turn)
				wantPath := "/v1beta/models/gemini-2.5-flash:generateContent"
				if tc.stream {
					wantPath = "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
				}
				if got.Path != wantPath || got.Method != "POST" {
					t.Errorf("turn %d: sent %s %s, want POST %s", turn+1, got.Method, got.Path, wantPath)
				}
				if k := got.Header.Get("X-Goog-Api-Key"); k != "test-key" {
					t.Errorf("turn %d: x-goog-api-key %q", turn+1, k)
				}
				if strings.Contains(got.Path, "test-key") {
					t.Errorf("turn %d: the API key is in the URL %s", turn+1, got.Path)
				}
				if diff := cmp.Diff(shapeOf(t, []byte(ex[turn].Request.Body)), shapeOf(t, []byte(got.Body))); diff != "" {
					t.Errorf("turn %d: request differs from the recorded one (-recorded +ours):\n%s", turn+1, diff)
				}
				if turn+1 < len(tc.turns) {
					checkSignatures(t, resp, want, []byte(ex[turn+1].Request.Body))
				}

				history = append(history, resp.Message)
				for _, call := range resp.Message.ToolCalls() {
					history = append(history, llm.ToolResultMessage(llm.ToolResult{CallID: call.ID, Name: call.Name, Content: tc.results[call.Name]}))
				}
			}
		})
	}
}

// checkSignatures checks that each call's thoughtSignature is the recorded
// one, whole, as the recording's next request sends it back.
func checkSignatures(t *testing.T, resp *llm.Response, want wantTurn, nextRequest []byte) {
	t.Helper()
	recorded := map[string]string{}
	for _, c := range shapeOf(t, nextRequest).Contents {
		for _, p := range c.Parts {
			if strings.HasPrefix(p, "call ") {
				name, _, _ := strings.Cut(strings.TrimPrefix(p, "call "), " ")
				if _, sig, ok := strings.Cut(p, " sig="); ok {
					recorded[name] = sig
				}
			}
		}
	}
	i := 0
	for _, part := range resp.Message.Parts {
		if part.Type != llm.PartToolCall {
			continue
		}
		w := want.calls[i]
		i++
		if w.sigPrefix == "" {
			if part.Signature != "" {
				t.Errorf("call %s has signature %.20q, the recording has none", w.name, part.Signature)
			}
			continue
		}
		if !strings.HasPrefix(part.Signature, w.sigPrefix) || part.Signature != recorded[w.name] {
			t.Errorf("call %s signature %.40q…, want the recorded %.40q…", w.name, part.Signature, recorded[w.name])
		}
	}
}

// runTurn sends req (streamed or not), checks the answer against want, and
// returns it.
func runTurn(t *testing.T, p *Provider, req *llm.Request, stream bool, want wantTurn) *llm.Response {
	t.Helper()
	resp, s := fixturetest.Send(t, p, req, stream)
	if stream {
		if s.Text != want.text {
			t.Errorf("streamed text = %q, want %q", s.Text, want.text)
		}
		if s.Reasoning != want.reasoning {
			t.Errorf("streamed reasoning = %q, want %q", s.Reasoning, want.reasoning)
		}
		checkCalls(t, "streamed", s.Calls, want.calls)
	}
	if got := resp.Message.Text(); got != want.text {
		t.Errorf("text = %q, want %q", got, want.text)
	}
	if got := resp.Message.Reasoning(); got != want.reasoning {
		t.Errorf("reasoning = %q, want %q", got, want.reasoning)
	}
	checkCalls(t, "response", resp.Message.ToolCalls(), want.calls)
	if resp.Usage == nil {
		t.Errorf("usage is nil, want %+v", want.usage)
	} else if *resp.Usage != want.usage {
		t.Errorf("usage = %+v, want %+v", *resp.Usage, want.usage)
	}
	if resp.FinishReason != want.finish {
		t.Errorf("finish = %q, want %q", resp.FinishReason, want.finish)
	}
	if resp.ID != want.id || resp.Model != flash {
		t.Errorf("id, model = %q, %q; want %q, %q", resp.ID, resp.Model, want.id, flash)
	}
	return resp
}

func checkCalls(t *testing.T, what string, got []llm.ToolCall, want []wantCall) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d tool calls, want %d: %+v", what, len(got), len(want), got)
		return
	}
	seen := map[string]bool{}
	for i := range want {
		if got[i].Name != want[i].name || string(got[i].Arguments) != want[i].args {
			t.Errorf("%s: call %d = %s %s, want %s %s", what, i, got[i].Name, got[i].Arguments, want[i].name, want[i].args)
		}
		if got[i].ID == "" || seen[got[i].ID] {
			t.Errorf("%s: call %d has id %q: empty or repeated", what, i, got[i].ID)
		}
		seen[got[i].ID] = true
	}
}

func recordedPrompts(t *testing.T, body []byte) (system, prompt string) {
	t.Helper()
	var r struct {
		SystemInstruction struct {
			Parts []struct {
				Text string `json:"text"`
			} `json:"parts"`
		} `json:"systemInstruction"`
		Contents []struct {
			Parts []struct {
				Text string `json:"text"`
			} `json:"parts"`
		} `json:"contents"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		t.Fatalf("recorded request: %v", err)
	}
	return r.SystemInstruction.Parts[0].Text, r.Contents[0].Parts[0].Text
}

// requestShape is the meaning of a generateContent request, independent of
// spelling: key order, the optional role of systemInstruction, an explicit
// AUTO function-calling mode (the recording spells out the default), and
// call ids, which are replaced by their order of appearance so that the
// recording's ids ("1", "2") and ours (random) compare, while a response
// that answers the wrong call still shows.
type requestShape struct {
	System           string
	Contents         []shapeContent
	Tools            string
	ToolConfig       string
	GenerationConfig string
}

type shapeContent struct {
	Role  string
	Parts []string
}

func shapeOf(t *testing.T, body []byte) requestShape {
	t.Helper()
	var r struct {
		SystemInstruction *struct {
			Parts []struct {
				Text string `json:"text"`
			} `json:"parts"`
		} `json:"systemInstruction"`
		Contents []struct {
			Role  string     `json:"role"`
			Parts []wirePart `json:"parts"`
		} `json:"contents"`
		Tools            json.RawMessage `json:"tools"`
		ToolConfig       json.RawMessage `json:"toolConfig"`
		GenerationConfig json.RawMessage `json:"generationConfig"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		t.Fatalf("request body: %v\n%s", err, body)
	}
	var s requestShape
	if r.SystemInstruction != nil {
		for _, p := range r.SystemInstruction.Parts {
			s.System += p.Text
		}
	}
	ids := map[string]string{}
	label := func(id string) string {
		if id == "" {
			return "<none>"
		}
		if _, ok := ids[id]; !ok {
			ids[id] = fmt.Sprintf("#%d", len(ids)+1)
		}
		return ids[id]
	}
	for _, c := range r.Contents {
		sc := shapeContent{Role: c.Role}
		for _, p := range c.Parts {
			var d string
			switch {
			case p.FunctionCall != nil:
				d = fmt.Sprintf("call %s id=%s args=%s", p.FunctionCall.Name, label(p.FunctionCall.ID), canonical(t, p.FunctionCall.Args))
			case p.FunctionResponse != nil:
				resp, _ := json.Marshal(p.FunctionResponse.Response)
				d = fmt.Sprintf("response %s id=%s %s", p.FunctionResponse.Name, label(p.FunctionResponse.ID), resp)
			case p.InlineData != nil:
				d = "image " + p.InlineData.MIMEType
			default:
				d = fmt.Sprintf("text thought=%v %q", p.Thought, deref(p.Text))
			}
			if p.ThoughtSignature != "" {
				d += " sig=" + p.ThoughtSignature
			}
			sc.Parts = append(sc.Parts, d)
		}
		s.Contents = append(s.Contents, sc)
	}
	s.Tools = canonical(t, r.Tools)
	s.ToolConfig = canonical(t, r.ToolConfig)
	if s.ToolConfig == `{"functionCallingConfig":{"mode":"AUTO"}}` {
		s.ToolConfig = ""
	}
	s.GenerationConfig = canonical(t, r.GenerationConfig)
	return s
}

// canonical re-encodes JSON with sorted keys and no spacing.
func canonical(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	if len(bytes.TrimSpace(raw)) == 0 {
		return ""
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("canonical %s: %v", raw, err)
	}
	out, _ := json.Marshal(v)
	return string(out)
}

// partialArgsFile is vercel-ai's recorded Gemini 3 stream in which call
// arguments arrive as partialArgs.
const partialArgsFile = "vercel-ai/google_src___fixtures___google-stream-tool-call-arguments.chunks.txt"

// geminiSSE frames recorded stream payloads as the fixtures README says
// Gemini does: "data: <line>\r\n\r\n", no terminal marker.
func geminiSSE(payloads []string) string {
	return fixturetest.SSE(payloads, "\r\n\r\n")
}

// TestReplayVercelPartialArgs replays vercel-ai's recorded Gemini 3 stream
// in which the arguments of two calls arrive as partialArgs: a part with
// the name and willContinue, string pieces at "$.location", and an empty
// functionCall closing each call.
func TestReplayVercelPartialArgs(t *testing.T) {
	chunks := fixturetest.Chunks(t, partialArgsFile)
	srv := fixturetest.NewServer(t, fixturetest.Answer{Status: 200, Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: geminiSSE(chunks)})
	p, err := New(Options{APIKey: "k", BaseURL: srv.URL, Model: "gemini-3.1-pro-preview"})
	if err != nil {
		t.Fatal(err)
	}
	req := &llm.Request{Messages: []llm.Message{llm.UserText("What is the weather in Boston and San Francisco?")},
		Tools: []llm.ToolSpec{{Name: "getWeather", Description: "Get the weather",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"location":{"type":"string"}},"required":["location"]}`)}}}

	s := fixturetest.Drain(t, p.Stream(context.Background(), req))
	if s.Err != nil {
		t.Fatalf("Stream: %v", s.Err)
	}
	if s.Text != "" || s.Reasoning != "" {
		t.Errorf("unexpected deltas: text %q, reasoning %q", s.Text, s.Reasoning)
	}
	streamed, resp := s.Calls, s.Response
	want := []wantCall{
		{name: "getWeather", args: `{"location":"Boston"}`, sigPrefix: "CiMBjz1rX25KieIB4d4AwFn8"},
		{name: "getWeather", args: `{"location":"San Francisco"}`},
	}
	checkCalls(t, "streamed", streamed, want)
	checkCalls(t, "response", resp.Message.ToolCalls(), want)
	if len(streamed) == 2 && streamed[0].ID == streamed[1].ID {
		t.Errorf("both calls have id %s", streamed[0].ID)
	}
	var sigs []string
	for _, part := range resp.Message.Parts {
		sigs = append(sigs, part.Signature)
	}
	var first struct {
		Candidates []struct {
			Content struct {
				Parts []struct {
					ThoughtSignature string `json:"thoughtSignature"`
				} `json:"parts"`
			} `json:"content"`
		} `json:"candidates"`
	}
	if err := json.Unmarshal([]byte(chunks[0]), &first); err != nil {
		t.Fatal(err)
	}
	recordedSig := first.Candidates[0].Content.Parts[0].ThoughtSignature
	if len(sigs) != 2 || !strings.HasPrefix(sigs[0], "CiMBjz1rX25KieIB4d4AwFn8") || sigs[0] != recordedSig || sigs[1] != "" {
		t.Errorf("signatures = %.30q, want the recorded one on the first call only", sigs)
	}
	if u := resp.Usage; u == nil || *u != (llm.Usage{InputTokens: 26, OutputTokens: 23 + 132, TotalTokens: 181}) {
		t.Errorf("usage = %+v", u)
	}
	if resp.FinishReason != llm.FinishToolCalls || resp.Model != "gemini-3.1-pro-preview" || resp.ID != "dqHOab6xGLzWodAPkPuViA4" {
		t.Errorf("finish, model, id = %q %q %q", resp.FinishReason, resp.Model, resp.ID)
	}

	// The next turn sends both calls back, the signature on the first, and
	// answers them in one user turn, names recovered from the calls.
	history := append(req.Messages, resp.Message,
		llm.ToolResultMessage(llm.ToolResult{CallID: streamed[0].ID, Content: "cold"}),
		llm.ToolResultMessage(llm.ToolResult{CallID: streamed[1].ID, Content: "foggy"}))
	w, _, err := p.cfg.buildRequest(&llm.Request{Messages: history})
	if err != nil {
		t.Fatal(err)
	}
	body2, _ := json.Marshal(w)
	got := shapeOf(t, body2)
	wantContents := []shapeContent{
		{Role: "user", Parts: []string{`text thought=false "What is the weather in Boston and San Francisco?"`}},
		{Role: "model", Parts: []string{
			`call getWeather id=#1 args={"location":"Boston"} sig=` + sigs[0],
			`call getWeather id=#2 args={"location":"San Francisco"}`,
		}},
		{Role: "user", Parts: []string{
			`response getWeather id=#1 {"result":"cold"}`,
			`response getWeather id=#2 {"result":"foggy"}`,
		}},
	}
	if diff := cmp.Diff(wantContents, got.Contents); diff != "" {
		t.Errorf("next turn (-want +got):\n%s", diff)
	}
}

// TestReplayLangchaingoError replays a real 403 from the Gemini API (a
// request without credentials): a typed, non-retryable error, sent once.
func TestReplayLangchaingoError(t *testing.T) {
	ex := fixturetest.HTTPRR(t, "langchaingo/llms_googleai_testdata_TestGoogleAIErrorHandling.httprr")
	if len(ex) != 1 {
		t.Fatalf("trace has %d exchanges, want 1", len(ex))
	}
	rec := ex[0]
	answer := rec.Answer
	srv := fixturetest.NewServer(t, answer, answer)
	p, err := New(Options{APIKey: "k", BaseURL: srv.URL, Model: "gemini-2.0-flash"})
	if err != nil {
		t.Fatal(err)
	}
	for _, stream := range []bool{false, true} {
		var err error
		if stream {
			for _, e := range p.Stream(context.Background(), &llm.Request{Messages: []llm.Message{llm.UserText("Hello")}}) {
				err = e
			}
		} else {
			_, err = p.Complete(context.Background(), &llm.Request{Messages: []llm.Message{llm.UserText("Hello")}})
		}
		var pe *llm.ProviderError
		if !errors.As(err, &pe) {
			t.Fatalf("stream=%v: err = %v, want *llm.ProviderError", stream, err)
		}
		const msg = "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API."
		if pe.Status != 403 || pe.Code != "PERMISSION_DENIED" || pe.Message != msg || pe.Retryable || pe.Provider != "gemini" {
			t.Errorf("stream=%v: error = %+v", stream, pe)
		}
	}
	if n := len(srv.Requests()); n != 2 {
		t.Errorf("%d requests for two calls: a 403 was retried", n)
	}
	// The conversation part of the request matches the recorded one (which
	// also carries the SDK's safetySettings and sampling defaults).
	if diff := cmp.Diff(shapeOf(t, []byte(rec.Request.Body)).Contents, shapeOf(t, []byte(srv.Request(t, 0).Body)).Contents); diff != "" {
		t.Errorf("contents differ from the recorded request (-recorded +ours):\n%s", diff)
	}
}
