package anthropic

import (
	"context"
	"errors"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/autoagent-go/autoagent/internal/fixturetest"
	"github.com/autoagent-go/autoagent/internal/httpx"
	"github.com/autoagent-go/autoagent/llm"
)

// The failures below are hand-written: none of the recordings in
// shared/fixtures shows a 529, a mid-stream error event or a broken stream.
// Their bodies follow Anthropic's documented error shape.

const overloadedBody = `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_011CXYZ"}`

// fakeClock replaces the retry policy's sleeping and jitter, recording the
// delays it was asked to wait.
func fakeClock(p *Provider) *[]time.Duration {
	var delays []time.Duration
	p.retry.Sleep = func(ctx context.Context, d time.Duration) error {
		delays = append(delays, d)
		return ctx.Err()
	}
	p.retry.Jitter = func(d time.Duration) time.Duration { return d }
	return &delays
}

func simpleAnswer(t *testing.T) fixturetest.Answer {
	t.Helper()
	return fixturetest.Cassette(t, "fantasy/TestAnthropicCommon/claude-sonnet-4/simple.yaml")[0].Answer
}

func newTestProvider(t *testing.T, url string, opts Options) *Provider {
	t.Helper()
	opts.APIKey, opts.BaseURL, opts.Model = "k", url, sonnet
	p, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestOverloadedIsRetried(t *testing.T) {
	retries := 0
	overloaded := fixturetest.Answer{Status: 529, Body: overloadedBody, Header: http.Header{"Request-Id": {"req_1"}}}
	srv := fixturetest.NewServer(t, overloaded, overloaded, simpleAnswer(t))
	p := newTestProvider(t, srv.URL, Options{OnRetry: func(int, error, time.Duration) { retries++ }})
	delays := fakeClock(p)

	resp, err := p.Complete(context.Background(), &llm.Request{Messages: []llm.Message{llm.UserText("Say hi in Portuguese")}})
	if err != nil {
		t.Fatalf("Complete: %v", err)
	}
	if !strings.HasPrefix(resp.Message.Text(), "Olá!") {
		t.Errorf("text = %q", resp.Message.Text())
	}
	// Two failures, two waits: 500ms then 1s (the policy's backoff, no
	// jitter under the fake clock).
	if want := []time.Duration{500 * time.Millisecond, time.Second}; !slices.Equal(*delays, want) {
		t.Errorf("delays = %v, want %v", *delays, want)
	}
	if retries != 2 {
		t.Errorf("OnRetry called %d times, want 2", retries)
	}
}

func TestOverloadedGivesUpWithTypedError(t *testing.T) {
	overloaded := fixturetest.Answer{Status: 529, Body: overloadedBody, Header: http.Header{"Request-Id": {"req_1"}}}
	srv := fixturetest.NewServer(t, overloaded, overloaded)
	p := newTestProvider(t, srv.URL, Options{MaxRetries: 1})
	fakeClock(p)

	_, err := p.Complete(context.Background(), &llm.Request{Messages: []llm.Message{llm.UserText("q")}})
	var pe *llm.ProviderError
	if !errors.As(err, &pe) {
		t.Fatalf("err = %v, want *llm.ProviderError", err)
	}
	if pe.Status != 529 || pe.Code != "overloaded_error" || !pe.Retryable || pe.RequestID != "req_1" || pe.Provider != "anthropic" {
		t.Errorf("error = %+v", pe)
	}
}

func TestRetryAfterHonoured(t *testing.T) {
	limited := fixturetest.Answer{Status: 429, Body: `{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`,
		Header: http.Header{"Retry-After": {"7"}}}
	srv := fixturetest.NewServer(t, limited, simpleAnswer(t))
	p := newTestProvider(t, srv.URL, Options{})
	delays := fakeClock(p)
	if _, err := p.Complete(context.Background(), &llm.Request{Messages: []llm.Message{llm.UserText("q")}}); err != nil {
		t.Fatal(err)
	}
	if want := []time.Duration{7 * time.Second}; !slices.Equal(*delays, want) {
		t.Errorf("delays = %v, want %v", *delays, want)
	}
}

func TestBadRequestIsNotRetried(t *testing.T) {
	bad := fixturetest.Answer{Status: 400, Body: `{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: must be positive"}}`,
		Header: http.Header{"Request-Id": {"req_bad"}}}
	srv := fixturetest.NewServer(t, bad)
	p := newTestProvider(t, srv.URL, Options{})
	delays := fakeClock(p)
	_, err := p.Complete(context.Background(), &llm.Request{Messages: []llm.Message{llm.UserText("q")}})
	var pe *llm.ProviderError
	if !errors.As(err, &pe) || pe.Status != 400 || pe.Code != "invalid_request_error" || pe.Retryable ||
		pe.Message != "max_tokens: must be positive" || pe.RequestID != "req_bad" {
		t.Fatalf("err = %#v", err)
	}
	if len(*delays) != 0 || len(srv.Requests()) != 1 {
		t.Errorf("a 400 was retried: %d requests, delays %v", len(srv.Requests()), *delays)
	}
}

// TestShouldRetryHeaderObeyed: Anthropic's x-should-retry header overrides
// the status both ways. Hand-written: no recording carries the header.
func TestShouldRetryHeaderObeyed(t *testing.T) {
	apiError := `{"type":"error","error":{"type":"api_error","message":"Internal server error"}}`
	t.Run("false stops the retry of a 500", func(t *testing.T) {
		srv := fixturetest.NewServer(t, fixturetest.Answer{Status: 500, Body: apiError, Header: http.Header{"X-Should-Retry": {"false"}}})
		p := newTestProvider(t, srv.URL, Options{})
		delays := fakeClock(p)
		_, err := p.Complete(context.Background(), &llm.Request{Messages: []llm.Message{llm.UserText("q")}})
		var pe *llm.ProviderError
		if !errors.As(err, &pe) || pe.Status != 500 || pe.Code != "api_error" || pe.Retryable {
			t.Fatalf("err = %#v, want a final 500", err)
		}
		if len(*delays) != 0 || len(srv.Requests()) != 1 {
			t.Errorf("retried against x-should-retry: false: %d requests, delays %v", len(srv.Requests()), *delays)
		}
	})
	t.Run("true retries a 400", func(t *testing.T) {
		busy := fixturetest.Answer{Status: 400, Body: `{"type":"error","error":{"type":"invalid_request_error","message":"busy"}}`,
			Header: http.Header{"X-Should-Retry": {"true"}}}
		srv := fixturetest.NewServer(t, busy, simpleAnswer(t))
		p := newTestProvider(t, srv.URL, Options{})
		delays := fakeClock(p)
		if _, err := p.Complete(context.Background(), &llm.Request{Messages: []llm.Message{llm.UserText("q")}}); err != nil {
			t.Fatalf("Complete: %v", err)
		}
		if len(*delays) != 1 || len(srv.Requests()) != 2 {
			t.Errorf("x-should-retry: true not obeyed: %d requests, delays %v", len(srv.Requests()), *delays)
		}
	})
}

func TestMissingAPIKeyNamesTheVariable(t *testing.T) {
	t.Setenv("MY_CLAUDE_KEY", "")
	p, err := New(Options{APIKeyEnv: "MY_CLAUDE_KEY", Model: "m", BaseURL: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Complete(context.Background(), &llm.Request{Messages: []llm.Message{llm.UserText("q")}})
	if !errors.Is(err, ErrNoAPIKey) || !strings.Contains(err.Error(), "MY_CLAUDE_KEY") {
		t.Errorf("err = %v, want ErrNoAPIKey naming MY_CLAUDE_KEY", err)
	}
	t.Setenv("ANTHROPIC_API_KEY", "")
	p, _ = New(Options{Model: "m"})
	s := fixturetest.Drain(t, p.Stream(context.Background(), &llm.Request{Messages: []llm.Message{llm.UserText("q")}}))
	if !errors.Is(s.Err, ErrNoAPIKey) || !strings.Contains(s.Err.Error(), "ANTHROPIC_API_KEY") {
		t.Errorf("stream err = %v, want ErrNoAPIKey naming ANTHROPIC_API_KEY", s.Err)
	}
}

// TestHeadersAndKeyFromEnvironment also checks that the key is read at each
// request: the Provider made while the variable was unset works once it is
// set.
func TestHeadersAndKeyFromEnvironment(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "")
	srv := fixturetest.NewServer(t, simpleAnswer(t))
	p, err := New(Options{BaseURL: srv.URL + "/", Model: sonnet, Headers: map[string]string{"Anthropic-Beta": "prompt-caching-2024-07-31", "Anthropic-Version": "2099-01-01"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Complete(context.Background(), &llm.Request{Messages: []llm.Message{llm.UserText("q")}}); !errors.Is(err, ErrNoAPIKey) || len(srv.Requests()) != 0 {
		t.Fatalf("err = %v after %d requests, want ErrNoAPIKey before any", err, len(srv.Requests()))
	}
	t.Setenv("ANTHROPIC_API_KEY", "env-key")
	if _, err := p.Complete(context.Background(), &llm.Request{Messages: []llm.Message{llm.UserText("q")}}); err != nil {
		t.Fatal(err)
	}
	got := srv.Request(t, 0)
	if got.Path != "/v1/messages" || got.Header.Get("X-Api-Key") != "env-key" ||
		got.Header.Get("Anthropic-Beta") != "prompt-caching-2024-07-31" || got.Header.Get("Anthropic-Version") != "2099-01-01" {
		t.Errorf("path %s, headers %v", got.Path, got.Header)
	}
}

// streamBody is a hand-written stream: the start of an answer, then the
// given tail.
func streamBody(tail string) string {
	return "event: message_start\n" +
		`data: {"type":"message_start","message":{"id":"msg_x","type":"message","role":"assistant","model":"claude-sonnet-4-20250514","content":[],"usage":{"input_tokens":10,"output_tokens":1}}}` + "\n\n" +
		"event: content_block_start\n" +
		`data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}` + "\n\n" +
		"event: content_block_delta\n" +
		`data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hel"}}` + "\n\n" +
		tail
}

func sseAnswer(body string) fixturetest.Answer {
	return fixturetest.Answer{Status: 200, Body: body, Header: http.Header{"Content-Type": {"text/event-stream"}, "Request-Id": {"req_s"}}}
}

func TestMidStreamErrorEvent(t *testing.T) {
	body := streamBody("event: error\n" + `data: {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}` + "\n\n")
	srv := fixturetest.NewServer(t, sseAnswer(body))
	p := newTestProvider(t, srv.URL, Options{})
	s := fixturetest.Drain(t, p.Stream(context.Background(), &llm.Request{Messages: []llm.Message{llm.UserText("q")}}))
	if s.Text != "Hel" || s.Response != nil {
		t.Errorf("before the error: text %q, done %v", s.Text, s.Response != nil)
	}
	var pe *llm.ProviderError
	if !errors.As(s.Err, &pe) || pe.Code != "overloaded_error" || pe.Message != "Overloaded" || !pe.Retryable || pe.Status != 0 || pe.RequestID != "req_s" {
		t.Fatalf("err = %#v", s.Err)
	}
	if len(srv.Requests()) != 1 {
		t.Errorf("a stream that already produced events was retried (%d requests)", len(srv.Requests()))
	}
}

func TestStreamEndsWithoutMessageStop(t *testing.T) {
	srv := fixturetest.NewServer(t, sseAnswer(streamBody("")))
	p := newTestProvider(t, srv.URL, Options{})
	s := fixturetest.Drain(t, p.Stream(context.Background(), &llm.Request{Messages: []llm.Message{llm.UserText("q")}}))
	if s.Text != "Hel" || s.Response != nil {
		t.Errorf("text %q, done %v", s.Text, s.Response != nil)
	}
	if !errors.Is(s.Err, llm.ErrIncompleteStream) || !llm.IsRetryable(s.Err) {
		t.Errorf("err = %v, want a retryable ErrIncompleteStream", s.Err)
	}
}

func TestStreamConnectionDrops(t *testing.T) {
	// The server closes the connection mid-event: the client sees an
	// unexpected EOF.
	cut := sseAnswer(streamBody("event: content_block_delta\ndata: {\"type\":\"content_bl"))
	cut.Cut = true
	srv := fixturetest.NewServer(t, cut)
	p := newTestProvider(t, srv.URL, Options{})
	s := fixturetest.Drain(t, p.Stream(context.Background(), &llm.Request{Messages: []llm.Message{llm.UserText("q")}}))
	if s.Text != "Hel" || !errors.Is(s.Err, llm.ErrIncompleteStream) || !llm.IsRetryable(s.Err) {
		t.Errorf("text %q, err %v; want Hel and a retryable ErrIncompleteStream", s.Text, s.Err)
	}
}

func TestStreamMalformedEvent(t *testing.T) {
	srv := fixturetest.NewServer(t, sseAnswer(streamBody("event: content_block_delta\ndata: {not json\n\n")))
	p := newTestProvider(t, srv.URL, Options{})
	s := fixturetest.Drain(t, p.Stream(context.Background(), &llm.Request{Messages: []llm.Message{llm.UserText("q")}}))
	var pe *llm.ProviderError
	if !errors.As(s.Err, &pe) || pe.Retryable || !strings.Contains(pe.Message, "malformed stream event") {
		t.Errorf("err = %v, want a non-retryable malformed-event error", s.Err)
	}
}

func TestStreamOutOfOrderEvents(t *testing.T) {
	// Events that break the protocol (a delta or stop for a block never
	// started) end the stream with an error naming the request.
	for _, tail := range []string{
		"event: content_block_delta\n" + `data: {"type":"content_block_delta","index":5,"delta":{"type":"text_delta","text":"x"}}` + "\n\n",
		"event: content_block_stop\n" + `data: {"type":"content_block_stop","index":5}` + "\n\n",
	} {
		srv := fixturetest.NewServer(t, sseAnswer(streamBody(tail)))
		p := newTestProvider(t, srv.URL, Options{})
		s := fixturetest.Drain(t, p.Stream(context.Background(), &llm.Request{Messages: []llm.Message{llm.UserText("q")}}))
		var pe *llm.ProviderError
		if !errors.As(s.Err, &pe) || pe.RequestID != "req_s" || !strings.Contains(pe.Message, "which was not started") {
			t.Errorf("err = %#v, want a malformed-stream error with request id req_s", s.Err)
		}
	}
}

// stallingServer sends the start of an answer, then stays silent until
// the client goes away.
func stallingServer(t *testing.T) *fixturetest.Server {
	return fixturetest.NewServer(t, fixturetest.Answer{Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: streamBody(""), Stall: true})
}

func TestStreamCancelledMidway(t *testing.T) {
	srv := stallingServer(t)
	p := newTestProvider(t, srv.URL, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var text string
	var err error
	for ev, e := range p.Stream(ctx, &llm.Request{Messages: []llm.Message{llm.UserText("q")}}) {
		if e != nil {
			err = e
			break
		}
		if ev.Type == llm.StreamText {
			text += ev.Text
			cancel() // the caller gives up after the first delta
		}
	}
	if text != "Hel" || !errors.Is(err, context.Canceled) {
		t.Errorf("text %q, err %v; want Hel then context.Canceled", text, err)
	}
	var pe *llm.ProviderError
	if errors.As(err, &pe) {
		t.Errorf("a cancellation must not look like a provider failure: %v", err)
	}
	srv.WaitClosed(t, 0)
}

func TestStreamStoppedEarlyReleasesConnection(t *testing.T) {
	srv := stallingServer(t)
	p := newTestProvider(t, srv.URL, Options{})
	before := runtime.NumGoroutine()
	for ev, err := range p.Stream(context.Background(), &llm.Request{Messages: []llm.Message{llm.UserText("q")}}) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == llm.StreamText {
			break
		}
	}
	srv.WaitClosed(t, 0)
	p.cfg.client.CloseIdleConnections()
	checkNoLeak(t, before)
}

func TestStreamIdleTimeout(t *testing.T) {
	srv := stallingServer(t)
	p := newTestProvider(t, srv.URL, Options{StreamIdleTimeout: 50 * time.Millisecond})
	s := fixturetest.Drain(t, p.Stream(context.Background(), &llm.Request{Messages: []llm.Message{llm.UserText("q")}}))
	if s.Text != "Hel" || s.Response != nil || !errors.Is(s.Err, llm.ErrIncompleteStream) || !errors.Is(s.Err, httpx.ErrStreamIdle) || !llm.IsRetryable(s.Err) {
		t.Errorf("text %q, done %v, err %v; want a retryable idle ErrIncompleteStream", s.Text, s.Response != nil, s.Err)
	}
	srv.WaitClosed(t, 0)
}

// checkNoLeak waits for the goroutine count to come back to before: the
// stream starts none, and the transport's connection goroutines end once
// the connection is closed.
func checkNoLeak(t *testing.T, before int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("goroutines: %d before, %d after:\n%s", before, runtime.NumGoroutine(), buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond)
	}
}
