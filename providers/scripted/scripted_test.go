package scripted

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/google/go-cmp/cmp"
)

func call(id, name, args string) llm.ToolCall {
	return llm.ToolCall{ID: id, Name: name, Arguments: json.RawMessage(args)}
}

func req(msgs ...llm.Message) *llm.Request { return &llm.Request{Messages: msgs} }

func TestCompletePlaysTurnsInOrderAndRecordsRequests(t *testing.T) {
	p := New(
		Turn{ToolCalls: []llm.ToolCall{call("c1", "weather", `{"city":"Oslo"}`)}, Usage: &llm.Usage{InputTokens: 10, OutputTokens: 3}},
		Turn{Text: "sunny", Reasoning: "easy"},
	)
	ctx := context.Background()
	r1, err := p.Complete(ctx, req(llm.UserText("weather?")))
	if err != nil {
		t.Fatal(err)
	}
	if got := r1.Message.ToolCalls(); len(got) != 1 || got[0].ID != "c1" || string(got[0].Arguments) != `{"city":"Oslo"}` {
		t.Fatalf("tool calls = %+v", got)
	}
	if r1.FinishReason != llm.FinishToolCalls {
		t.Errorf("finish = %q, want tool_calls", r1.FinishReason)
	}
	if r1.Usage == nil || r1.Usage.TotalTokens != 13 {
		t.Errorf("usage = %+v, want total 13 (normalised)", r1.Usage)
	}
	r2, err := p.Complete(ctx, req(llm.UserText("again")))
	if err != nil {
		t.Fatal(err)
	}
	if r2.Message.Text() != "sunny" || r2.Message.Reasoning() != "easy" || r2.FinishReason != llm.FinishStop {
		t.Errorf("second answer = %+v", r2)
	}
	if r2.Usage != nil {
		t.Errorf("usage invented: %+v", r2.Usage)
	}
	reqs := p.Requests()
	if len(reqs) != 2 || reqs[1].Messages[0].Text() != "again" {
		t.Fatalf("recorded requests = %+v", reqs)
	}
	// The returned argument bytes are a copy: changing them leaves the script intact.
	r1.Message.Parts[0].ToolCall.Arguments[2] = 'X'
	p.Reset()
	r1b, _ := p.Complete(ctx, req())
	if string(r1b.Message.ToolCalls()[0].Arguments) != `{"city":"Oslo"}` {
		t.Error("script was modified through a response")
	}
}

func TestExhaustedErrorSaysWhere(t *testing.T) {
	p := New(Turn{Text: "only"})
	ctx := context.Background()
	if _, err := p.Complete(ctx, req(llm.UserText("one"))); err != nil {
		t.Fatal(err)
	}
	_, err := p.Complete(ctx, req(llm.UserText("the second question")))
	if !errors.Is(err, ErrExhausted) {
		t.Fatalf("err = %v, want ErrExhausted", err)
	}
	for _, want := range []string{"turn 2", "1 turn", "the second question"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	// Streaming reports it too.
	var got error
	for _, e := range p.Stream(ctx, req()) {
		got = e
	}
	if !errors.Is(got, ErrExhausted) {
		t.Errorf("stream err = %v", got)
	}
}

func TestStreamChunksTextAndEndsWithDone(t *testing.T) {
	text := "Héllo wörld, this is a streamed answer ✓"
	p := NewWithOptions(Options{ChunkSize: 5}, Turn{Text: text, ToolCalls: []llm.ToolCall{call("a", "t", `{}`)}})
	var deltas []string
	var calls []string
	var done *llm.Response
	for ev, err := range p.Stream(context.Background(), req()) {
		if err != nil {
			t.Fatal(err)
		}
		switch ev.Type {
		case llm.StreamText:
			deltas = append(deltas, ev.Text)
		case llm.StreamToolCall:
			calls = append(calls, ev.ToolCall.ID)
		case llm.StreamDone:
			done = ev.Response
		}
	}
	if strings.Join(deltas, "") != text {
		t.Errorf("deltas join to %q", strings.Join(deltas, ""))
	}
	if len(deltas) != 8 { // 40 runes / 5
		t.Errorf("got %d deltas, want 8", len(deltas))
	}
	for _, d := range deltas {
		if n := len([]rune(d)); n > 5 {
			t.Errorf("delta %q has %d runes", d, n)
		}
	}
	if !cmp.Equal(calls, []string{"a"}) {
		t.Errorf("tool call events = %v", calls)
	}
	if done == nil || done.Message.Text() != text {
		t.Fatalf("done = %+v", done)
	}
}

func TestStreamStopsWhenConsumerBreaks(t *testing.T) {
	p := NewWithOptions(Options{ChunkSize: 1}, Turn{Text: "abcdef"}, Turn{Text: "next"})
	n := 0
	for range p.Stream(context.Background(), req()) {
		n++
		if n == 2 {
			break
		}
	}
	if n != 2 {
		t.Fatalf("consumed %d", n)
	}
	// The broken stream consumed its turn; the next call plays the next one.
	r, err := p.Complete(context.Background(), req())
	if err != nil || r.Message.Text() != "next" {
		t.Fatalf("next = %v, %v", r, err)
	}
}

func TestStreamMidStreamError(t *testing.T) {
	perr := &llm.ProviderError{Provider: "scripted", Message: "connection reset", Retryable: true}
	p := NewWithOptions(Options{ChunkSize: 3}, Turn{Text: "partial answer", Err: perr, MidStream: true})
	var text string
	var got error
	for ev, err := range p.Stream(context.Background(), req()) {
		if err != nil {
			got = err
			continue
		}
		if ev.Type == llm.StreamDone {
			t.Fatal("done after a mid-stream failure")
		}
		text += ev.Text
	}
	if text != "partial answer" || !errors.Is(got, perr) {
		t.Fatalf("text %q err %v", text, got)
	}
}

func TestStreamHonoursCancellationDuringDelay(t *testing.T) {
	p := NewWithOptions(Options{ChunkSize: 1, ChunkDelay: time.Hour}, Turn{Text: "abc"})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var got error
	for _, err := range p.Stream(ctx, req()) {
		got = err
	}
	if !errors.Is(got, context.Canceled) {
		t.Fatalf("err = %v", got)
	}
}

func TestPerConversationServesConcurrentRuns(t *testing.T) {
	p := NewWithOptions(Options{PerConversation: true},
		Turn{ToolCalls: []llm.ToolCall{call("", "step", `{}`)}},
		Turn{Text: "done"},
	)
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r1, err := p.Complete(context.Background(), req(llm.UserText("go")))
			if err != nil {
				errs <- err
				return
			}
			r2, err := p.Complete(context.Background(), req(llm.UserText("go"), r1.Message, llm.ToolResultMessage(llm.ToolResult{Content: "ok"})))
			if err != nil {
				errs <- err
				return
			}
			if r2.Message.Text() != "done" {
				errs <- errors.New("wrong turn: " + r2.Message.Text())
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if p.Calls() != 100 {
		t.Errorf("calls = %d", p.Calls())
	}
}

func TestTurnErrorAndCheck(t *testing.T) {
	perr := &llm.ProviderError{Provider: "scripted", Status: 429, Retryable: true}
	p := New(
		Turn{Err: perr},
		Turn{Text: "ok", Check: func(_ context.Context, r *llm.Request) error {
			if len(r.Tools) != 1 {
				return errors.New("want one tool")
			}
			return nil
		}},
	)
	_, err := p.Complete(context.Background(), req())
	if !llm.IsRetryable(err) {
		t.Fatalf("err = %v", err)
	}
	_, err = p.Complete(context.Background(), req())
	if err == nil || !strings.Contains(err.Error(), "turn 2: check failed: want one tool") {
		t.Fatalf("check err = %v", err)
	}
}

// TestExhaustedConcurrently: calls past the end of the script from several
// goroutines each get ErrExhausted, and (under -race) building the message
// reads no shared state outside the lock.
func TestExhaustedConcurrently(t *testing.T) {
	p := New(Turn{Text: "only"})
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			_, err := p.Complete(context.Background(), &llm.Request{Messages: []llm.Message{llm.UserText("q")}})
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	exhausted := 0
	for err := range errs {
		if errors.Is(err, ErrExhausted) {
			exhausted++
		} else if err != nil {
			t.Errorf("err = %v", err)
		}
	}
	if exhausted != 7 {
		t.Errorf("%d calls exhausted the one-turn script, want 7", exhausted)
	}
}

// TestForgetRequests: with ForgetRequests the provider keeps no request
// (a long eval suite would otherwise hold every run's transcript), still
// counts the calls, and still plays each conversation's turn.
func TestForgetRequests(t *testing.T) {
	p := NewWithOptions(Options{PerConversation: true, ForgetRequests: true}, Turn{Text: "one"}, Turn{Text: "two"})
	for range 3 {
		r, err := p.Complete(t.Context(), req(llm.UserText("go")))
		if err != nil || r.Message.Text() != "one" {
			t.Fatalf("first turn: %v, %v", r, err)
		}
		r, err = p.Complete(t.Context(), req(llm.UserText("go"), r.Message, llm.UserText("again")))
		if err != nil || r.Message.Text() != "two" {
			t.Fatalf("second turn: %v, %v", r, err)
		}
	}
	if n := len(p.Requests()); n != 0 {
		t.Errorf("%d requests kept, want none", n)
	}
	if p.Calls() != 6 {
		t.Errorf("calls = %d, want 6", p.Calls())
	}
	_, err := p.Complete(t.Context(), req(llm.UserText("go"), llm.AssistantText("a"), llm.AssistantText("b")))
	if !errors.Is(err, ErrExhausted) || !strings.Contains(err.Error(), "call 7 ") {
		t.Errorf("exhausted error %v, want call 7 named", err)
	}
}
