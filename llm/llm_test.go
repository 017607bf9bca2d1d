package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"strings"
	"testing"
	"time"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/google/go-cmp/cmp"
)

func fullMessage() llm.Message {
	return llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{
		{Type: llm.PartReasoning, Text: "think", Signature: "sig-1"},
		{Type: llm.PartReasoning, Redacted: "opaque=="},
		llm.TextPart("Hello "),
		llm.TextPart("world"),
		llm.ImagePart("image/png", []byte{0x89, 'P', 'N', 'G'}),
		{Type: llm.PartImage, Image: &llm.Image{URL: "https://example.com/a.png"}},
		llm.ToolCallPart(llm.ToolCall{ID: "c1", Name: "weather", Arguments: json.RawMessage(`{"city":"Oslo"}`)}),
		{Type: llm.PartToolCall, ToolCall: &llm.ToolCall{ID: "c2", Name: "t", Arguments: json.RawMessage(`{}`)}, Signature: "gemini-sig"},
	}}
}

func TestMessageJSONRoundTripIsLossless(t *testing.T) {
	msgs := []llm.Message{
		llm.SystemText("sys"),
		llm.UserText("héllo ✓"),
		fullMessage(),
		llm.ToolResultMessage(llm.ToolResult{CallID: "c1", Name: "weather", Content: "rain", IsError: true}),
	}
	b, err := json.Marshal(msgs)
	if err != nil {
		t.Fatal(err)
	}
	var back []llm.Message
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(msgs, back); diff != "" {
		t.Fatalf("round trip (-want +got):\n%s", diff)
	}
	b2, _ := json.Marshal(back)
	if string(b) != string(b2) {
		t.Error("encoding is not stable")
	}
}

func TestMessageAccessors(t *testing.T) {
	m := fullMessage()
	if m.Text() != "Hello world" || m.Reasoning() != "think" || !m.HasImages() {
		t.Errorf("text %q reasoning %q images %v", m.Text(), m.Reasoning(), m.HasImages())
	}
	calls := m.ToolCalls()
	if len(calls) != 2 || calls[0].ID != "c1" || calls[1].ID != "c2" {
		t.Errorf("calls = %+v", calls)
	}
	if llm.UserText("x").ToolCalls() != nil || llm.UserText("x").HasImages() {
		t.Error("text message has calls or images")
	}
	r := llm.ToolResultMessage(llm.ToolResult{CallID: "c", Content: "ok"})
	if rs := r.ToolResults(); len(rs) != 1 || rs[0].CallID != "c" || r.Role != llm.RoleTool {
		t.Errorf("tool results = %+v", rs)
	}
}

func TestCloneIsDeep(t *testing.T) {
	m := fullMessage()
	c := m.Clone()
	c.Parts[4].Image.Data[0] = 0
	c.Parts[6].ToolCall.Arguments[2] = 'X'
	c.Parts[6].ToolCall.ID = "changed"
	c.Parts[2].Text = "changed"
	if m.Parts[4].Image.Data[0] != 0x89 || m.Parts[6].ToolCall.Arguments[2] != 'c' || m.Parts[6].ToolCall.ID != "c1" || m.Parts[2].Text != "Hello " {
		t.Fatal("Clone shares memory with the original")
	}
	r := llm.ToolResultMessage(llm.ToolResult{Content: "a"})
	rc := r.Clone()
	rc.Parts[0].ToolResult.Content = "b"
	if r.Parts[0].ToolResult.Content != "a" {
		t.Fatal("tool result shared")
	}
}

func TestValidate(t *testing.T) {
	if err := fullMessage().Validate(); err != nil {
		t.Fatal(err)
	}
	bad := map[string]llm.Message{
		"unknown role":       {Role: "robot"},
		"unknown part":       {Role: llm.RoleUser, Parts: []llm.Part{{Type: "video"}}},
		"empty image":        {Role: llm.RoleUser, Parts: []llm.Part{{Type: llm.PartImage, Image: &llm.Image{}}}},
		"nil image":          {Role: llm.RoleUser, Parts: []llm.Part{{Type: llm.PartImage}}},
		"call without name":  {Role: llm.RoleAssistant, Parts: []llm.Part{{Type: llm.PartToolCall, ToolCall: &llm.ToolCall{ID: "x"}}}},
		"result without one": {Role: llm.RoleTool, Parts: []llm.Part{{Type: llm.PartToolResult}}},
	}
	for name, m := range bad {
		err := m.Validate()
		if err == nil || !strings.HasPrefix(err.Error(), "llm: ") {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestUsage(t *testing.T) {
	u := llm.Usage{InputTokens: 100, OutputTokens: 20, CachedTokens: 40}.Normalize()
	if u.TotalTokens != 120 {
		t.Errorf("Normalize = %+v", u)
	}
	given := llm.Usage{InputTokens: 1, OutputTokens: 1, TotalTokens: 5}.Normalize()
	if given.TotalTokens != 5 {
		t.Error("Normalize replaced a reported total")
	}
	sum := u.Add(llm.Usage{InputTokens: 50, CachedTokens: 10, TotalTokens: 50})
	if sum != (llm.Usage{InputTokens: 150, OutputTokens: 20, CachedTokens: 50, TotalTokens: 170}) {
		t.Errorf("Add = %+v", sum)
	}
	if r := sum.CacheHitRatio(); r != 50.0/150.0 {
		t.Errorf("ratio = %v", r)
	}
	if (llm.Usage{}).CacheHitRatio() != 0 {
		t.Error("ratio of nothing")
	}
	b, _ := json.Marshal(llm.Usage{})
	if string(b) != `{"input_tokens":0,"output_tokens":0,"cached_tokens":0,"total_tokens":0}` {
		t.Errorf("usage JSON = %s", b)
	}
}

func TestProviderError(t *testing.T) {
	cause := errors.New("connection reset")
	cases := []struct {
		err  *llm.ProviderError
		want string
	}{
		{&llm.ProviderError{Provider: "openai", Status: 429, Code: "rate_limit_exceeded", Message: "slow down", RequestID: "req_1"}, "llm: openai returned HTTP 429 (rate_limit_exceeded): slow down [request req_1]"},
		{&llm.ProviderError{Err: cause}, "llm: provider failed: connection reset"},
		{&llm.ProviderError{Provider: "gemini", Status: 503}, "llm: gemini returned HTTP 503"},
	}
	for _, c := range cases {
		if c.err.Error() != c.want {
			t.Errorf("got %q, want %q", c.err.Error(), c.want)
		}
	}
	wrapped := fmt.Errorf("step 2: %w", &llm.ProviderError{Status: 500, Retryable: true, RetryAfter: time.Second, Err: cause})
	if !llm.IsRetryable(wrapped) || !errors.Is(wrapped, cause) || llm.IsRetryable(cause) {
		t.Error("IsRetryable / Unwrap")
	}
}

type named struct{}

var _ llm.Provider = named{}

func (named) Complete(context.Context, *llm.Request) (*llm.Response, error) {
	return &llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{llm.TextPart("hi"),
		llm.ToolCallPart(llm.ToolCall{ID: "a", Name: "x"}), llm.ToolCallPart(llm.ToolCall{ID: "b", Name: "y"})}}}, nil
}

func (n named) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.StreamEvent, error] {
	return llm.StreamFromComplete(ctx, req, n.Complete)
}

func (named) Name() string { return "named" }

func TestStreamFromComplete(t *testing.T) {
	var types []llm.StreamEventType
	for ev, err := range llm.StreamFromComplete(context.Background(), &llm.Request{}, named{}.Complete) {
		if err != nil {
			t.Fatal(err)
		}
		types = append(types, ev.Type)
	}
	if fmt.Sprint(types) != "[text tool_call tool_call done]" {
		t.Errorf("events = %v", types)
	}
	n := 0
	for range llm.StreamFromComplete(context.Background(), &llm.Request{}, named{}.Complete) {
		n++
		break
	}
	if n != 1 {
		t.Error("yield == false not honoured")
	}
	boom := errors.New("boom")
	var got error
	for _, err := range llm.StreamFromComplete(context.Background(), &llm.Request{}, func(context.Context, *llm.Request) (*llm.Response, error) { return nil, boom }) {
		got = err
	}
	if !errors.Is(got, boom) {
		t.Errorf("error = %v", got)
	}
	if llm.Name(named{}) != "named" {
		t.Error("Name")
	}
}

func TestNewCallID(t *testing.T) {
	seen := map[string]bool{}
	for range 10000 {
		id := llm.NewCallID("call_")
		if !strings.HasPrefix(id, "call_") || len(id) != len("call_")+16 || seen[id] {
			t.Fatalf("id %q (dup %v)", id, seen[id])
		}
		seen[id] = true
	}
}

func TestRequestJSONOmitsUnset(t *testing.T) {
	b, _ := json.Marshal(llm.Request{Messages: []llm.Message{llm.UserText("x")}})
	if strings.Contains(string(b), "tool_choice") || strings.Contains(string(b), "temperature") || strings.Contains(string(b), "max_tokens") {
		t.Errorf("unset fields sent: %s", b)
	}
	temp := 0.0
	b, _ = json.Marshal(llm.Request{Temperature: &temp, ToolChoice: llm.ToolChoice{Mode: llm.ToolChoiceRequired}})
	if !strings.Contains(string(b), `"temperature":0`) || !strings.Contains(string(b), `"tool_choice":{"mode":"required"}`) {
		t.Errorf("set fields missing: %s", b)
	}
}
