// Package providertest is a conformance suite for [llm.Provider]
// implementations: run it against yours, as testing/slogtest does for
// slog handlers.
//
//	func TestConformance(t *testing.T) {
//		providertest.Run(t, providertest.Harness{
//			NewProvider: func(t *testing.T, s providertest.Scenario) llm.Provider {
//				srv := httptest.NewServer(serveMyWireFormat(s)) // s.Answer or s.Error, in your wire format
//				t.Cleanup(srv.Close)
//				p, err := mine.New(mine.Options{BaseURL: srv.URL, APIKey: "k", MaxRetries: -1})
//				if err != nil {
//					t.Fatal(err)
//				}
//				return p
//			},
//		})
//	}
//
// # How it works
//
// Each check is a [Scenario]: the answer a model gives (text, reasoning,
// tool calls, usage, finish reason) or the error a server returns. The
// harness turns it into a provider that answers every call with it, most
// often by serving the scenario in its own wire format from an httptest
// server; the suite then calls Complete and Stream and checks what comes
// back against the scenario, and the llm.Provider contract: text and
// reasoning deltas add up to the final message, each tool call is yielded
// once before the done event, done comes last and only once, usage is
// reported exactly (and nil when the server reported none), the request is
// never modified, concurrent calls are safe, a cancelled stream ends
// promptly with an error wrapping context.Canceled, leaving a stream early
// returns at once, and HTTP errors map to *llm.ProviderError with the right
// Retryable and RetryAfter. That leaving early also closes the connection
// is for the provider's own tests to check: the suite does not see the
// server.
//
// A provider that is not reached over HTTP (a scripted model, a go-plugin
// subprocess) implements the harness by building the answer directly;
// [Scenario.Error] then describes the error the provider must return.
//
// # Options
//
// [Harness.Skip] lists checks that do not apply (a provider without
// native streaming skips [CheckCancel], one whose wire reports no usage
// skips [CheckUsage]); skipped checks are reported as skipped, never as
// passed.
package providertest

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/autoagent-go/autoagent/llm"
)

// The names of the checks, for Harness.Skip and -run filters.
const (
	CheckText          = "text"
	CheckReasoning     = "reasoning"
	CheckToolCall      = "tool_call"
	CheckParallelCalls = "parallel_calls"
	CheckStreamTools   = "stream_with_tools"
	CheckUsage         = "usage"
	CheckNoUsage       = "no_usage"
	CheckCancel        = "cancel_mid_stream"
	CheckEarlyBreak    = "early_break"
	CheckErrors        = "errors"
	CheckConcurrent    = "concurrent"
)

// Scenario is one canned model answer or failure.
type Scenario struct {
	// Name is the check's name, one of the Check constants (with a
	// suffix for error cases, such as "errors/429").
	Name string
	// Answer is the model's answer the harness must serve when Error is
	// nil: Message (reasoning, text and tool calls, in that order), Usage
	// (nil: report none), FinishReason, Model and ID.
	Answer llm.Response
	// Error, when set, is the failure to serve instead: Status is the HTTP
	// status, Code and Message the provider's error body, RetryAfter a
	// Retry-After header (whole seconds). The suite checks the provider
	// reports Status, Retryable and RetryAfter (and Code when set).
	Error *llm.ProviderError
	// Stall asks the harness to send the first text delta of Answer on a
	// stream and then hold the connection open, silent, until the client
	// goes away. Only the cancellation and early-break checks set it.
	Stall bool
}

// Harness connects the suite to the provider under test.
type Harness struct {
	// NewProvider returns the provider under test, made to answer every
	// call with s. The provider should not retry (the error checks count
	// on one attempt) and the harness should free what it started with
	// t.Cleanup.
	NewProvider func(t *testing.T, s Scenario) llm.Provider
	// Skip lists the checks that do not apply to this provider.
	Skip []string
}

// Run runs every check as a subtest of t.
func Run(t *testing.T, h Harness) {
	t.Helper()
	if h.NewProvider == nil {
		t.Fatal("providertest: Harness.NewProvider is nil")
	}
	checks := []struct {
		name string
		fn   func(*testing.T, Harness)
	}{
		{CheckText, testText},
		{CheckReasoning, testReasoning},
		{CheckToolCall, testToolCall},
		{CheckParallelCalls, testParallelCalls},
		{CheckStreamTools, testStreamWithTools},
		{CheckUsage, testUsage},
		{CheckNoUsage, testNoUsage},
		{CheckCancel, testCancel},
		{CheckEarlyBreak, testEarlyBreak},
		{CheckErrors, testErrors},
		{CheckConcurrent, testConcurrent},
	}
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			if slices.Contains(h.Skip, c.name) {
				t.Skipf("providertest: %s skipped by the harness", c.name)
			}
			c.fn(t, h)
		})
	}
}

// request is the request of every check: a conversation with a system
// prompt, an earlier tool round trip and reasoning, so the provider's
// encoding of each part is exercised.
func request() *llm.Request {
	temp := 0.2
	return &llm.Request{
		Model: "conformance-model",
		Messages: []llm.Message{
			llm.SystemText("You are a test."),
			llm.UserText("What is 2+3 and 2*3? Then the weather in Oslo."),
			{Role: llm.RoleAssistant, Parts: []llm.Part{
				{Type: llm.PartReasoning, Text: "I should add first."},
				llm.ToolCallPart(llm.ToolCall{ID: "call_prev", Name: "add", Arguments: json.RawMessage(`{"a":2,"b":3}`)}),
			}},
			llm.ToolResultMessage(llm.ToolResult{CallID: "call_prev", Name: "add", Content: "5"}),
		},
		Tools: []llm.ToolSpec{
			{Name: "add", Description: "Add two integers.", InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"required":["a","b"]}`)},
			{Name: "weather", Description: "Weather for a city.", InputSchema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)},
		},
		Temperature: &temp,
		MaxTokens:   256,
	}
}

func answer(parts []llm.Part, usage *llm.Usage, finish llm.FinishReason) llm.Response {
	return llm.Response{
		Message:      llm.Message{Role: llm.RoleAssistant, Parts: parts},
		Usage:        usage,
		FinishReason: finish,
		Model:        "conformance-model",
		ID:           "resp_conformance",
	}
}

func callPart(id, name, args string) llm.Part {
	return llm.ToolCallPart(llm.ToolCall{ID: id, Name: name, Arguments: json.RawMessage(args)})
}

var defaultUsage = &llm.Usage{InputTokens: 120, OutputTokens: 14, CachedTokens: 100, TotalTokens: 134}

func testText(t *testing.T, h Harness) {
	s := Scenario{Name: CheckText, Answer: answer([]llm.Part{llm.TextPart("2+3 is 5. Olá, mundo!")}, defaultUsage, llm.FinishStop)}
	bothWays(t, h, s)
}

func testReasoning(t *testing.T, h Harness) {
	s := Scenario{Name: CheckReasoning, Answer: answer([]llm.Part{
		{Type: llm.PartReasoning, Text: "The user wants a sum. 2+3=5."},
		llm.TextPart("5"),
	}, defaultUsage, llm.FinishStop)}
	bothWays(t, h, s)
}

func testToolCall(t *testing.T, h Harness) {
	s := Scenario{Name: CheckToolCall, Answer: answer([]llm.Part{callPart("call_w1", "weather", `{"city":"Oslo"}`)}, defaultUsage, llm.FinishToolCalls)}
	bothWays(t, h, s)
}

func testParallelCalls(t *testing.T, h Harness) {
	s := Scenario{Name: CheckParallelCalls, Answer: answer([]llm.Part{
		callPart("call_a1", "add", `{"a":2,"b":3}`),
		callPart("call_m1", "multiply", `{"a":2,"b":3}`),
		callPart("call_w2", "weather", `{"city":"São Paulo, \"BR\""}`),
	}, defaultUsage, llm.FinishToolCalls)}
	bothWays(t, h, s)
}

func testStreamWithTools(t *testing.T, h Harness) {
	s := Scenario{Name: CheckStreamTools, Answer: answer([]llm.Part{
		llm.TextPart("Let me look that up for you, step by step."),
		callPart("call_w3", "weather", `{"city":"Oslo"}`),
		callPart("call_a2", "add", `{"a":20,"b":22}`),
	}, defaultUsage, llm.FinishToolCalls)}
	p := h.NewProvider(t, s)
	check(t, "Stream", s, streamCollect(t, p, s))
}

func testUsage(t *testing.T, h Harness) {
	s := Scenario{Name: CheckUsage, Answer: answer([]llm.Part{llm.TextPart("ok")},
		&llm.Usage{InputTokens: 2048, OutputTokens: 77, CachedTokens: 1024, TotalTokens: 2125}, llm.FinishStop)}
	bothWays(t, h, s)
}

func testNoUsage(t *testing.T, h Harness) {
	s := Scenario{Name: CheckNoUsage, Answer: answer([]llm.Part{llm.TextPart("ok")}, nil, llm.FinishStop)}
	bothWays(t, h, s)
}

// bothWays checks s through Complete and through Stream.
func bothWays(t *testing.T, h Harness, s Scenario) {
	t.Helper()
	p := h.NewProvider(t, s)
	req := request()
	before := cloneRequest(req)
	resp, err := p.Complete(context.Background(), req)
	if err != nil {
		t.Fatalf("Complete: %v", err)
	}
	if !reflect.DeepEqual(before, req) {
		t.Errorf("Complete modified the request")
	}
	check(t, "Complete", s, resp)
	check(t, "Stream", s, streamCollect(t, p, s))
}

// streamCollect runs Stream and checks the event contract.
func streamCollect(t *testing.T, p llm.Provider, s Scenario) *llm.Response {
	t.Helper()
	req := request()
	before := cloneRequest(req)
	var (
		text, reasoning strings.Builder
		calls           []llm.ToolCall
		done            *llm.Response
	)
	for ev, err := range p.Stream(context.Background(), req) {
		if err != nil {
			t.Fatalf("Stream: %v", err)
		}
		if done != nil {
			t.Fatalf("Stream: %q event after the done event", ev.Type)
		}
		switch ev.Type {
		case llm.StreamText:
			text.WriteString(ev.Text)
		case llm.StreamReasoning:
			reasoning.WriteString(ev.Text)
		case llm.StreamToolCall:
			if ev.ToolCall == nil {
				t.Fatalf("Stream: tool_call event without a ToolCall")
			}
			calls = append(calls, *ev.ToolCall)
		case llm.StreamDone:
			if ev.Response == nil {
				t.Fatalf("Stream: done event without a Response")
			}
			done = ev.Response
		default:
			t.Fatalf("Stream: unknown event type %q", ev.Type)
		}
	}
	if done == nil {
		t.Fatalf("Stream: ended without a done event or an error")
	}
	if !reflect.DeepEqual(before, req) {
		t.Errorf("Stream modified the request")
	}
	if got, want := text.String(), done.Message.Text(); got != want {
		t.Errorf("Stream: text deltas add up to %q, final text is %q", got, want)
	}
	if got, want := reasoning.String(), done.Message.Reasoning(); got != want {
		t.Errorf("Stream: reasoning deltas add up to %q, final reasoning is %q", got, want)
	}
	if !sameCalls(calls, done.Message.ToolCalls()) {
		t.Errorf("Stream: tool_call events %s differ from the final calls %s", fmtCalls(calls), fmtCalls(done.Message.ToolCalls()))
	}
	return done
}

// check compares a response with the scenario's answer.
func check(t *testing.T, via string, s Scenario, got *llm.Response) {
	t.Helper()
	want := s.Answer
	if got.Message.Role != llm.RoleAssistant {
		t.Errorf("%s: role = %q, want assistant", via, got.Message.Role)
	}
	if g, w := got.Message.Text(), want.Message.Text(); g != w {
		t.Errorf("%s: text = %q, want %q", via, g, w)
	}
	if g, w := got.Message.Reasoning(), want.Message.Reasoning(); g != w {
		t.Errorf("%s: reasoning = %q, want %q", via, g, w)
	}
	if g, w := got.Message.ToolCalls(), want.Message.ToolCalls(); !sameCalls(g, w) {
		t.Errorf("%s: tool calls = %s, want %s", via, fmtCalls(g), fmtCalls(w))
	}
	if !reflect.DeepEqual(got.Usage, want.Usage) {
		t.Errorf("%s: usage = %s, want %s", via, fmtUsage(got.Usage), fmtUsage(want.Usage))
	}
	if got.FinishReason != want.FinishReason {
		t.Errorf("%s: finish reason = %q, want %q", via, got.FinishReason, want.FinishReason)
	}
}

// sameCalls compares ids, names and arguments as JSON values.
func sameCalls(a, b []llm.ToolCall) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].ID != b[i].ID || a[i].Name != b[i].Name {
			return false
		}
		var va, vb any
		if json.Unmarshal(a[i].Arguments, &va) != nil || json.Unmarshal(b[i].Arguments, &vb) != nil || !reflect.DeepEqual(va, vb) {
			return false
		}
	}
	return true
}

func fmtCalls(cs []llm.ToolCall) string {
	var b strings.Builder
	b.WriteString("[")
	for i, c := range cs {
		if i > 0 {
			b.WriteString(" ")
		}
		b.WriteString(c.ID + ":" + c.Name + string(c.Arguments))
	}
	return b.String() + "]"
}

func fmtUsage(u *llm.Usage) string {
	if u == nil {
		return "nil"
	}
	b, _ := json.Marshal(u)
	return string(b)
}

func cloneRequest(r *llm.Request) *llm.Request {
	c := *r
	c.Messages = make([]llm.Message, len(r.Messages))
	for i, m := range r.Messages {
		c.Messages[i] = m.Clone()
	}
	c.Tools = slices.Clone(r.Tools)
	return &c
}

// hangLimit bounds how long the suite waits for a stream that should end
// at once, so a provider that hangs fails instead of blocking the test
// binary. It is a deadlock guard, not a speed requirement.
const hangLimit = 20 * time.Second

func testCancel(t *testing.T, h Harness) {
	s := Scenario{Name: CheckCancel, Stall: true, Answer: answer([]llm.Part{llm.TextPart("first words, then silence")}, nil, llm.FinishStop)}
	p := h.NewProvider(t, s)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	result := make(chan error, 1)
	go func() {
		var last error
		got := false
		for ev, err := range p.Stream(ctx, request()) {
			if err != nil {
				last = err
				break
			}
			if ev.Type == llm.StreamText && !got {
				got = true
				cancel()
			}
			if ev.Type == llm.StreamDone {
				last = errors.New("stream completed although the server stalled")
			}
		}
		if !got && last == nil {
			last = errors.New("no text delta arrived before the stream ended")
		}
		result <- last
	}()
	select {
	case err := <-result:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled stream ended with %v, want an error wrapping context.Canceled", err)
		}
		if llm.IsRetryable(err) {
			t.Errorf("a cancelled call is reported retryable: %v", err)
		}
	case <-time.After(hangLimit):
		t.Fatalf("stream did not end within %v of its context being cancelled", hangLimit)
	}
}

func testEarlyBreak(t *testing.T, h Harness) {
	s := Scenario{Name: CheckEarlyBreak, Stall: true, Answer: answer([]llm.Part{llm.TextPart("first words, then silence")}, nil, llm.FinishStop)}
	p := h.NewProvider(t, s)
	result := make(chan int, 1)
	go func() {
		n := 0
		for range p.Stream(context.Background(), request()) {
			n++
			break
		}
		result <- n
	}()
	select {
	case n := <-result:
		if n != 1 {
			t.Fatalf("got %d events before breaking, want 1", n)
		}
	case <-time.After(hangLimit):
		t.Fatalf("leaving the stream loop did not return within %v", hangLimit)
	}
}

func testErrors(t *testing.T, h Harness) {
	cases := []struct {
		name      string
		err       llm.ProviderError
		retryable bool
	}{
		{"400", llm.ProviderError{Status: 400, Code: "invalid_request_error", Message: "bad request for conformance"}, false},
		{"401", llm.ProviderError{Status: 401, Code: "authentication_error", Message: "invalid key"}, false},
		{"429", llm.ProviderError{Status: 429, Code: "rate_limit_exceeded", Message: "slow down", RetryAfter: 7 * time.Second}, true},
		{"500", llm.ProviderError{Status: 500, Code: "server_error", Message: "boom"}, true},
		{"503", llm.ProviderError{Status: 503, Message: "overloaded"}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want := c.err
			s := Scenario{Name: CheckErrors + "/" + c.name, Error: &want}
			p := h.NewProvider(t, s)
			_, err := p.Complete(context.Background(), request())
			checkError(t, "Complete", err, want, c.retryable)
			var streamErr error
			for _, err := range p.Stream(context.Background(), request()) {
				if err != nil {
					streamErr = err
					break
				}
			}
			checkError(t, "Stream", streamErr, want, c.retryable)
		})
	}
}

func checkError(t *testing.T, via string, err error, want llm.ProviderError, retryable bool) {
	t.Helper()
	var pe *llm.ProviderError
	if !errors.As(err, &pe) {
		t.Fatalf("%s: err = %v (%T), want a *llm.ProviderError", via, err, err)
	}
	if pe.Status != want.Status {
		t.Errorf("%s: Status = %d, want %d", via, pe.Status, want.Status)
	}
	if pe.Retryable != retryable {
		t.Errorf("%s: Retryable = %v, want %v for HTTP %d", via, pe.Retryable, retryable, want.Status)
	}
	if pe.RetryAfter != want.RetryAfter {
		t.Errorf("%s: RetryAfter = %v, want %v", via, pe.RetryAfter, want.RetryAfter)
	}
	if want.Code != "" && pe.Code != want.Code {
		t.Errorf("%s: Code = %q, want %q", via, pe.Code, want.Code)
	}
	if want.Message != "" && !strings.Contains(pe.Error(), want.Message) {
		t.Errorf("%s: error %q does not carry the server's message %q", via, pe.Error(), want.Message)
	}
}

func testConcurrent(t *testing.T, h Harness) {
	s := Scenario{Name: CheckConcurrent, Answer: answer([]llm.Part{llm.TextPart("same answer"), callPart("call_c1", "add", `{"a":1,"b":1}`)}, defaultUsage, llm.FinishToolCalls)}
	p := h.NewProvider(t, s)
	var wg sync.WaitGroup
	errs := make(chan string, 16)
	for i := range 8 {
		wg.Go(func() {
			var resp *llm.Response
			var err error
			if i%2 == 0 {
				resp, err = p.Complete(context.Background(), request())
			} else {
				for ev, e := range p.Stream(context.Background(), request()) {
					if e != nil {
						err = e
						break
					}
					if ev.Type == llm.StreamDone {
						resp = ev.Response
					}
				}
			}
			switch {
			case err != nil:
				errs <- err.Error()
			case resp == nil || resp.Message.Text() != "same answer" || !sameCalls(resp.Message.ToolCalls(), s.Answer.Message.ToolCalls()):
				errs <- "a concurrent call got a different answer"
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}
