package openai

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/autoagent-go/autoagent/internal/fixturetest"
	"github.com/autoagent-go/autoagent/internal/httpx"
	"github.com/autoagent-go/autoagent/llm"
	"github.com/google/go-cmp/cmp"
)

// fakeSleep records retry waits instead of sleeping.
type fakeSleep struct{ waits []time.Duration }

func (f *fakeSleep) sleep(ctx context.Context, d time.Duration) error {
	f.waits = append(f.waits, d)
	return ctx.Err()
}

func newTestProvider(t *testing.T, url string, opts Options) (*Provider, *fakeSleep) {
	t.Helper()
	opts.BaseURL = url + "/v1"
	if opts.APIKey == "" {
		opts.APIKey = "k"
	}
	p, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	fs := &fakeSleep{}
	p.retry.Sleep = fs.sleep
	p.retry.Jitter = func(d time.Duration) time.Duration { return d }
	return p, fs
}

var hi = &llm.Request{Model: "gpt-4o", Messages: []llm.Message{llm.UserText("hi")}}

const okBody = `{"id":"x","model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":"hello"},"finish_reason":"stop"}]}`

// TestRetries uses hand-written 429/5xx responses (no recording has them)
// and a fake clock: it checks the number of calls and the exact waits.
func TestRetries(t *testing.T) {
	tests := []struct {
		name      string
		statuses  []int
		headers   http.Header
		opts      Options
		wantCalls int
		wantWaits []time.Duration
		wantErr   int // final status, 0 for success
	}{
		{"429 then ok, Retry-After honoured", []int{429, 200}, http.Header{"Retry-After": {"7"}}, Options{}, 2, []time.Duration{7 * time.Second}, 0},
		{"retry-after-ms honoured", []int{429, 200}, http.Header{"Retry-After-Ms": {"1500"}}, Options{}, 2, []time.Duration{1500 * time.Millisecond}, 0},
		{"5xx backoff doubles, attempts capped", []int{500, 502, 503, 200}, nil, Options{}, 3, []time.Duration{500 * time.Millisecond, time.Second}, 503},
		{"MaxRetries raises the cap", []int{500, 502, 503, 200}, nil, Options{MaxRetries: 5}, 4, []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second}, 0},
		{"no retry on 400", []int{400, 200}, nil, Options{}, 1, nil, 400},
		{"no retry on 401", []int{401, 200}, nil, Options{}, 1, nil, 401},
		{"no retry on 501", []int{501, 200}, nil, Options{}, 1, nil, 501},
		{"MaxRetries negative disables", []int{503, 200}, nil, Options{MaxRetries: -1}, 1, nil, 503},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var calls atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				n := int(calls.Add(1)) - 1
				st := tt.statuses[min(n, len(tt.statuses)-1)]
				if st != 200 {
					for k, v := range tt.headers {
						w.Header()[k] = v
					}
					w.WriteHeader(st)
					io.WriteString(w, `{"error":{"message":"nope","type":"x"}}`)
					return
				}
				io.WriteString(w, okBody)
			}))
			defer srv.Close()
			// OnRetry sees each retry before its wait: the attempt about to
			// be made, the failure that caused it, the delay.
			var seen []time.Duration
			opts := tt.opts
			opts.OnRetry = func(attempt int, err error, d time.Duration) {
				var pe *llm.ProviderError
				if attempt != len(seen)+2 || !errors.As(err, &pe) || pe.Status != tt.statuses[attempt-2] {
					t.Errorf("OnRetry(%d, %v, %v) before retry %d", attempt, err, d, len(seen)+1)
				}
				seen = append(seen, d)
			}
			p, fs := newTestProvider(t, srv.URL, opts)
			resp, err := p.Complete(context.Background(), hi)
			if int(calls.Load()) != tt.wantCalls {
				t.Errorf("calls = %d, want %d", calls.Load(), tt.wantCalls)
			}
			if diff := cmp.Diff(tt.wantWaits, fs.waits); diff != "" {
				t.Errorf("waits (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantWaits, seen); diff != "" {
				t.Errorf("delays OnRetry saw (-want +got):\n%s", diff)
			}
			var pe *llm.ProviderError
			switch {
			case tt.wantErr == 0 && (err != nil || resp.Message.Text() != "hello"):
				t.Errorf("err = %v, want success", err)
			case tt.wantErr != 0 && (!errors.As(err, &pe) || pe.Status != tt.wantErr):
				t.Errorf("err = %v, want status %d", err, tt.wantErr)
			}
		})
	}
}

func TestStreamOpeningIsRetried(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			w.WriteHeader(503)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ok\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	}))
	defer srv.Close()
	p, fs := newTestProvider(t, srv.URL, Options{})
	s := fixturetest.Drain(t, p.Stream(context.Background(), hi))
	if s.Err != nil || s.Response.Message.Text() != "ok" || len(fs.waits) != 1 {
		t.Fatalf("resp = %+v, err = %v, waits = %v", s.Response, s.Err, fs.waits)
	}
}

// streamServer serves body as an event stream; stall keeps the connection
// open after it (a stalled server) until the client goes away.
func streamServer(t *testing.T, body string, stall bool) *fixturetest.Server {
	return fixturetest.NewServer(t, fixturetest.Answer{Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: body, Stall: stall})
}

const textChunk = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"par\"}}]}\n\n"

func TestStreamIncomplete(t *testing.T) {
	tests := []struct {
		name string
		body string
	}{
		{"ends without finish or DONE", textChunk},
		{"ends mid-event", textChunk + "data: {\"choices\":[{\"index\":0,\"del"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := streamServer(t, tt.body, false)
			p, _ := newTestProvider(t, srv.URL, Options{})
			s := fixturetest.Drain(t, p.Stream(context.Background(), hi))
			var pe *llm.ProviderError
			if !errors.As(s.Err, &pe) {
				t.Fatalf("err = %v, want a ProviderError", s.Err)
			}
			if tt.name == "ends without finish or DONE" && (!errors.Is(s.Err, llm.ErrIncompleteStream) || !pe.Retryable) {
				t.Errorf("err = %v, want retryable ErrIncompleteStream", s.Err)
			}
		})
	}
}

func TestStreamConnectionDropped(t *testing.T) {
	// The server closes the connection mid chunked body: the client sees an
	// unexpected EOF.
	srv := fixturetest.NewServer(t, fixturetest.Answer{Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: textChunk, Cut: true})
	p, _ := newTestProvider(t, srv.URL, Options{})
	s := fixturetest.Drain(t, p.Stream(context.Background(), hi))
	if s.Text != "par" || !errors.Is(s.Err, llm.ErrIncompleteStream) || !llm.IsRetryable(s.Err) {
		t.Fatalf("text %q, err %v; want the delta then a retryable ErrIncompleteStream", s.Text, s.Err)
	}
}

func TestStreamWithoutDONEButFinished(t *testing.T) {
	srv := streamServer(t, textChunk+"data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"length\"}]}\n\n", false)
	p, _ := newTestProvider(t, srv.URL, Options{})
	s := fixturetest.Drain(t, p.Stream(context.Background(), hi))
	if s.Err != nil || s.Response.FinishReason != llm.FinishLength || s.Response.Message.Text() != "par" || s.Response.Usage != nil {
		t.Fatalf("resp = %+v, err = %v", s.Response, s.Err)
	}
}

func TestStreamCancelMidStream(t *testing.T) {
	srv := streamServer(t, textChunk, true)
	p, _ := newTestProvider(t, srv.URL, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var err error
	for ev, e := range p.Stream(ctx, hi) {
		if e != nil {
			err = e
			break
		}
		if ev.Text == "par" {
			cancel()
		}
	}
	if !errors.Is(err, context.Canceled) || llm.IsRetryable(err) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	srv.WaitClosed(t, 0) // the server saw the connection close
}

func TestStreamBreakReleasesConnection(t *testing.T) {
	srv := streamServer(t, textChunk, true)
	p, _ := newTestProvider(t, srv.URL, Options{})
	for range p.Stream(context.Background(), hi) {
		break
	}
	srv.WaitClosed(t, 0) // fails if the body were left open
}

func TestStreamIdleTimeout(t *testing.T) {
	srv := streamServer(t, textChunk, true)
	p, _ := newTestProvider(t, srv.URL, Options{StreamIdleTimeout: 50 * time.Millisecond})
	s := fixturetest.Drain(t, p.Stream(context.Background(), hi))
	if !errors.Is(s.Err, httpx.ErrStreamIdle) || !errors.Is(s.Err, llm.ErrIncompleteStream) {
		t.Fatalf("err = %v, want ErrStreamIdle", s.Err)
	}
}

func TestStreamErrorChunk(t *testing.T) {
	// Hand-written: OpenAI sends an error object mid-stream when the server
	// fails while generating; no recording has one.
	srv := streamServer(t, textChunk+"data: {\"error\":{\"message\":\"The server had an error\",\"type\":\"server_error\",\"code\":null}}\n\n", false)
	p, _ := newTestProvider(t, srv.URL, Options{})
	s := fixturetest.Drain(t, p.Stream(context.Background(), hi))
	var pe *llm.ProviderError
	if !errors.As(s.Err, &pe) || pe.Code != "server_error" || !pe.Retryable || pe.Status != 0 {
		t.Fatalf("err = %#v", s.Err)
	}
}

// TestToolCallYieldedWhenComplete checks that a call is yielded as soon as
// the next call starts, before the stream ends: the server stalls after
// the second call's first fragment.
func TestToolCallYieldedWhenComplete(t *testing.T) {
	body := `data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"add","arguments":"{\"a\":"}}]}}]}` + "\n\n" +
		`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"1}"}}]}}]}` + "\n\n" +
		`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"c2","type":"function","function":{"name":"mul","arguments":""}}]}}]}` + "\n\n"
	srv := streamServer(t, body, true)
	p, _ := newTestProvider(t, srv.URL, Options{})
	for ev, err := range p.Stream(context.Background(), hi) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == llm.StreamToolCall {
			if ev.ToolCall.ID != "c1" || string(ev.ToolCall.Arguments) != `{"a":1}` {
				t.Fatalf("call = %+v", ev.ToolCall)
			}
			return // got it while the stream is still open
		}
	}
	t.Fatal("no tool call before the stream ended")
}

func TestMissingAPIKeyNamesVariable(t *testing.T) {
	t.Setenv("P1_OPENAI_TEST_KEY", "")
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { calls.Add(1) }))
	defer srv.Close()
	p, err := New(Options{BaseURL: srv.URL, APIKeyEnv: "P1_OPENAI_TEST_KEY"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Complete(context.Background(), hi)
	if !errors.Is(err, ErrNoAPIKey) || !strings.Contains(err.Error(), "P1_OPENAI_TEST_KEY") || calls.Load() != 0 {
		t.Fatalf("err = %v (calls %d)", err, calls.Load())
	}
	// Resolved per request: setting the variable later works.
	t.Setenv("P1_OPENAI_TEST_KEY", "now-set")
	if _, err := p.encode(hi, false); err != nil {
		t.Fatal(err)
	}
	if k, err := p.cfg.apiKey(); k != "now-set" || err != nil {
		t.Fatalf("key = %q, %v", k, err)
	}
}

func TestCompatibleSendsNoAuthWithoutKey(t *testing.T) {
	var auth atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth.Store(r.Header.Get("Authorization"))
		io.WriteString(w, okBody)
	}))
	defer srv.Close()
	p, err := Compatible(srv.URL+"/v1", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Complete(context.Background(), hi); err != nil {
		t.Fatal(err)
	}
	if a := auth.Load().(string); a != "" || p.Name() != "openai-compatible" {
		t.Fatalf("Authorization = %q, name %q", a, p.Name())
	}
}

func TestEncode(t *testing.T) {
	temp := 0.5
	img := []byte("\x89PNG\r\n\x1a\n")
	req := &llm.Request{
		Model: "gpt-5-mini",
		Messages: []llm.Message{
			llm.SystemText("sys"),
			{Role: llm.RoleUser, Parts: []llm.Part{llm.TextPart("what is this?"), llm.ImagePart("", img), {Type: llm.PartImage, Image: &llm.Image{URL: "https://x/y.jpg"}}}},
			{Role: llm.RoleAssistant, Parts: []llm.Part{{Type: llm.PartReasoning, Text: "think"}, llm.ToolCallPart(llm.ToolCall{ID: "c1", Name: "f"})}},
			{Role: llm.RoleTool, Parts: []llm.Part{
				{Type: llm.PartToolResult, ToolResult: &llm.ToolResult{CallID: "c1", Content: "r1"}},
				{Type: llm.PartToolResult, ToolResult: &llm.ToolResult{CallID: "c2", Content: "r2"}},
			}},
		},
		Tools:          []llm.ToolSpec{{Name: "f", Description: "d"}},
		ToolChoice:     llm.ToolChoice{Mode: llm.ToolChoiceTool, Name: "f"},
		Temperature:    &temp,
		MaxTokens:      100,
		ResponseFormat: &llm.ResponseFormat{Type: "json_schema", Name: "out", Schema: json.RawMessage(`{"type":"object"}`), Strict: true},
	}
	p, err := New(Options{APIKey: "k", ExtraBody: map[string]any{"seed": 1, "stream_options": map[string]any{"x": true}}})
	if err != nil {
		t.Fatal(err)
	}
	body, err := p.encode(req, true)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	json.Unmarshal(body, &got)
	want := map[string]any{
		"model": "gpt-5-mini",
		"messages": []any{
			map[string]any{"role": "system", "content": "sys"},
			map[string]any{"role": "user", "content": []any{
				map[string]any{"type": "text", "text": "what is this?"},
				map[string]any{"type": "image_url", "image_url": map[string]any{"url": "data:image/png;base64,iVBORw0KGgo="}},
				map[string]any{"type": "image_url", "image_url": map[string]any{"url": "https://x/y.jpg"}},
			}},
			map[string]any{"role": "assistant", "reasoning_content": "think", "tool_calls": []any{
				map[string]any{"id": "c1", "type": "function", "function": map[string]any{"name": "f", "arguments": "{}"}}}},
			map[string]any{"role": "tool", "tool_call_id": "c1", "content": "r1"},
			map[string]any{"role": "tool", "tool_call_id": "c2", "content": "r2"},
		},
		"tools": []any{map[string]any{"type": "function", "function": map[string]any{"name": "f", "description": "d",
			"parameters": map[string]any{"type": "object", "properties": map[string]any{}}}}},
		"tool_choice":           map[string]any{"type": "function", "function": map[string]any{"name": "f"}},
		"temperature":           0.5,
		"max_completion_tokens": 100.0,
		"response_format": map[string]any{"type": "json_schema", "json_schema": map[string]any{
			"name": "out", "schema": map[string]any{"type": "object"}, "strict": true}},
		"stream":         true,
		"stream_options": map[string]any{"include_usage": true, "x": true},
		"seed":           1.0,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("body (-want +got):\n%s", diff)
	}
}

func TestMaxTokensFieldByFamily(t *testing.T) {
	for model, want := range map[string]bool{
		"o1": true, "o1-mini": true, "o3-mini": true, "o4-mini-2025-04-16": true, "gpt-5": true, "gpt-5.1": true,
		"openai/o3": true, "gpt-4o": false, "gpt-4.1": false, "deepseek-chat": false, "o10x": false, "gpt-50": false,
	} {
		if got := usesMaxCompletionTokens(model); got != want {
			t.Errorf("usesMaxCompletionTokens(%q) = %v, want %v", model, got, want)
		}
	}
}

func TestOmitReasoning(t *testing.T) {
	p, _ := New(Options{APIKey: "k", OmitReasoning: true})
	body, err := p.encode(&llm.Request{Model: "m", Messages: []llm.Message{{Role: llm.RoleAssistant, Parts: []llm.Part{{Type: llm.PartReasoning, Text: "secret"}, llm.TextPart("a")}}}}, false)
	if err != nil || strings.Contains(string(body), "secret") {
		t.Fatalf("body %s, err %v", body, err)
	}
}

func TestUsageDeepSeekCacheHitOnly(t *testing.T) {
	// Hand-written: DeepSeek bodies in the recordings carry both cache
	// fields; this checks the fallback when only DeepSeek's is present.
	var w chatResponse
	json.Unmarshal([]byte(`{"choices":[{"message":{"content":"x"}}],"usage":{"prompt_tokens":50,"completion_tokens":5,"prompt_cache_hit_tokens":40}}`), &w)
	p, _ := New(Options{APIKey: "k"})
	resp, err := p.toResponse(&w)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&llm.Usage{InputTokens: 50, OutputTokens: 5, CachedTokens: 40, TotalTokens: 55}, resp.Usage); diff != "" {
		t.Errorf("usage (-want +got):\n%s", diff)
	}
}

func TestInvalidOptionsAndRequests(t *testing.T) {
	if _, err := New(Options{BaseURL: "ftp://x"}); err == nil {
		t.Error("ftp base URL accepted")
	}
	if _, err := New(Options{MaxTokensField: "max"}); err == nil {
		t.Error("unknown MaxTokensField accepted")
	}
	p, _ := New(Options{APIKey: "k"})
	if _, err := p.Complete(context.Background(), &llm.Request{Messages: hi.Messages}); !errors.Is(err, ErrNoModel) {
		t.Errorf("no model: err = %v", err)
	}
	bad := &llm.Request{Model: "m", Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{{Type: llm.PartImage, Image: &llm.Image{}}}}}}
	if _, err := p.Complete(context.Background(), bad); !errors.Is(err, ErrInvalidRequest) {
		t.Errorf("empty image: err = %v", err)
	}
}

func TestHeadersOverride(t *testing.T) {
	var got atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.Store(r.Header.Clone())
		io.WriteString(w, okBody)
	}))
	defer srv.Close()
	p, _ := newTestProvider(t, srv.URL, Options{Headers: map[string]string{"Authorization": "Bearer gateway", "OpenAI-Organization": "org-1"}})
	if _, err := p.Complete(context.Background(), hi); err != nil {
		t.Fatal(err)
	}
	h := got.Load().(http.Header)
	if h.Get("Authorization") != "Bearer gateway" || h.Get("Openai-Organization") != "org-1" || h.Get("Content-Type") != "application/json" {
		t.Fatalf("headers = %v", h)
	}
}
