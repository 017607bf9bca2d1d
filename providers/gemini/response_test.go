package gemini

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/autoagent-go/autoagent/internal/fixturetest"
	"github.com/autoagent-go/autoagent/llm"
)

// No recording shows cached-content usage, a blocked prompt, a trailing
// signature on an empty text part or an image answer; these hand-written
// bodies follow the documented generateContent shapes.

func assemble(t *testing.T, chunks ...string) ([]llm.StreamEvent, *llm.Response) {
	t.Helper()
	a := newAssembler("configured-model")
	var evs []llm.StreamEvent
	for _, c := range chunks {
		var w wireResponse
		if err := json.Unmarshal([]byte(c), &w); err != nil {
			t.Fatal(err)
		}
		out, err := a.add(&w, "")
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, out...)
	}
	out, resp := a.result()
	return append(evs, out...), resp
}

func TestUsageNormalisation(t *testing.T) {
	_, resp := assemble(t, `{"candidates":[{"content":{"role":"model","parts":[{"text":"ok"}]},"finishReason":"STOP"}],
		"usageMetadata":{"promptTokenCount":1000,"cachedContentTokenCount":800,"candidatesTokenCount":10,"thoughtsTokenCount":30,"toolUsePromptTokenCount":5,"totalTokenCount":1045}}`)
	want := llm.Usage{InputTokens: 1005, CachedTokens: 800, OutputTokens: 40, TotalTokens: 1045}
	if *resp.Usage != want {
		t.Errorf("usage = %+v, want %+v", *resp.Usage, want)
	}
	if resp.Model != "configured-model" {
		t.Errorf("model = %q, want the configured one when the server names none", resp.Model)
	}
	_, resp = assemble(t, `{"candidates":[{"content":{"parts":[{"text":"ok"}]},"finishReason":"STOP"}]}`)
	if resp.Usage != nil {
		t.Errorf("usage invented: %+v", resp.Usage)
	}
}

func TestStreamedTextJoinedWithTrailingSignature(t *testing.T) {
	evs, resp := assemble(t,
		`{"candidates":[{"content":{"parts":[{"text":"**Plan**","thought":true}]}}]}`,
		`{"candidates":[{"content":{"parts":[{"text":" more","thought":true}]}}]}`,
		`{"candidates":[{"content":{"parts":[{"text":"Hello"}]}}]}`,
		`{"candidates":[{"content":{"parts":[{"text":", world"}]}}]}`,
		`{"candidates":[{"content":{"parts":[{"text":"","thoughtSignature":"SIG"}]},"finishReason":"STOP"}]}`,
	)
	want := []llm.Part{
		{Type: llm.PartReasoning, Text: "**Plan** more"},
		{Type: llm.PartText, Text: "Hello, world", Signature: "SIG"},
	}
	if len(resp.Message.Parts) != len(want) {
		t.Fatalf("parts = %+v", resp.Message.Parts)
	}
	for i := range want {
		if resp.Message.Parts[i] != want[i] {
			t.Errorf("part %d = %+v, want %+v", i, resp.Message.Parts[i], want[i])
		}
	}
	var kinds []string
	for _, e := range evs {
		kinds = append(kinds, string(e.Type)+":"+e.Text)
	}
	if got := strings.Join(kinds, "|"); got != "reasoning:**Plan**|reasoning: more|text:Hello|text:, world" {
		t.Errorf("events = %s", got)
	}
	if resp.FinishReason != llm.FinishStop {
		t.Errorf("finish = %q", resp.FinishReason)
	}
}

func TestBlockedPromptAndFinishReasons(t *testing.T) {
	_, resp := assemble(t, `{"promptFeedback":{"blockReason":"SAFETY"},"usageMetadata":{"promptTokenCount":8,"totalTokenCount":8}}`)
	if resp.FinishReason != llm.FinishContentFilter || len(resp.Message.Parts) != 0 {
		t.Errorf("blocked prompt: %+v", resp)
	}
	for in, want := range map[string]llm.FinishReason{
		"STOP": llm.FinishStop, "MAX_TOKENS": llm.FinishLength, "SAFETY": llm.FinishContentFilter,
		"RECITATION": llm.FinishContentFilter, "MALFORMED_FUNCTION_CALL": llm.FinishOther, "OTHER": llm.FinishOther,
	} {
		if got := finishReason(in, false); got != want {
			t.Errorf("finishReason(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestImageAnswer(t *testing.T) {
	_, resp := assemble(t, `{"candidates":[{"content":{"parts":[{"inlineData":{"mimeType":"image/png","data":"AQID"}},{"text":"a tiny image"}]},"finishReason":"STOP"}]}`)
	p := resp.Message.Parts
	if len(p) != 2 || p[0].Type != llm.PartImage || p[0].Image.MIMEType != "image/png" || string(p[0].Image.Data) != "\x01\x02\x03" || p[1].Text != "a tiny image" {
		t.Errorf("parts = %+v", p)
	}
}

func TestCompleteKeepsServerIDs(t *testing.T) {
	// Some Gemini deployments do send call ids; they are kept, not replaced.
	srv := fixturetest.NewServer(t, fixturetest.Answer{Status: 200, Body: `{"candidates":[{"content":{"parts":[
		{"functionCall":{"id":"srv-1","name":"f","args":{"a":1}}},{"functionCall":{"name":"g"}}]},"finishReason":"STOP"}]}`})
	p, _ := New(Options{APIKey: "k", BaseURL: srv.URL, Model: "m"})
	resp, err := p.Complete(context.Background(), &llm.Request{Messages: []llm.Message{llm.UserText("q")}})
	if err != nil {
		t.Fatal(err)
	}
	calls := resp.Message.ToolCalls()
	if len(calls) != 2 || calls[0].ID != "srv-1" || !strings.HasPrefix(calls[1].ID, "gemini_") || string(calls[1].Arguments) != "{}" {
		t.Errorf("calls = %+v", calls)
	}
	if resp.FinishReason != llm.FinishToolCalls {
		t.Errorf("finish = %q", resp.FinishReason)
	}
}
