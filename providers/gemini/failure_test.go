package gemini

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

// The failures below are hand-written: the only recorded Gemini error is a
// 403. Bodies follow Google's documented error shape, RetryInfo included.

const unavailableBody = `{"error":{"code":503,"message":"The model is overloaded. Please try again later.","status":"UNAVAILABLE",
	"details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"2.5s"}]}}`

const exhaustedBody = `{"error":{"code":429,"message":"You exceeded your current quota.","status":"RESOURCE_EXHAUSTED",
	"details":[{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"quotaMetric":"generate_content_free_tier_requests"}]},
	{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"90s"}]}}`

func fakeClock(p *Provider) *[]time.Duration {
	var delays []time.Duration
	p.retry.Sleep = func(ctx context.Context, d time.Duration) error {
		delays = append(delays, d)
		return ctx.Err()
	}
	p.retry.Jitter = func(d time.Duration) time.Duration { return d }
	return &delays
}

func newTestProvider(t *testing.T, url string, opts Options) *Provider {
	t.Helper()
	opts.APIKey, opts.BaseURL, opts.Model = "k", url, flash
	p, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func simpleAnswer(t *testing.T) fixturetest.Answer {
	t.Helper()
	return fixturetest.Cassette(t, "fantasy/TestGoogleCommon/gemini-2.5-flash/simple.yaml")[0].Answer
}

var hello = &llm.Request{Messages: []llm.Message{llm.UserText("Say hi in Portuguese")}}

func TestUnavailableRetriedAfterRetryInfo(t *testing.T) {
	retries := 0
	srv := fixturetest.NewServer(t, fixturetest.Answer{Status: 503, Body: unavailableBody}, simpleAnswer(t))
	p := newTestProvider(t, srv.URL, Options{OnRetry: func(int, error, time.Duration) { retries++ }})
	delays := fakeClock(p)
	resp, err := p.Complete(context.Background(), hello)
	if err != nil {
		t.Fatalf("Complete: %v", err)
	}
	if resp.Message.Text() != "Olá!" {
		t.Errorf("text = %q", resp.Message.Text())
	}
	if want := []time.Duration{2500 * time.Millisecond}; !slices.Equal(*delays, want) {
		t.Errorf("delays = %v, want the RetryInfo delay %v", *delays, want)
	}
	if retries != 1 {
		t.Errorf("OnRetry called %d times, want 1", retries)
	}
}

func TestStreamOpeningRetried(t *testing.T) {
	stream := fixturetest.Cassette(t, "fantasy/TestGoogleCommon/gemini-2.5-flash/simple_streaming.yaml")[0].Answer
	srv := fixturetest.NewServer(t, fixturetest.Answer{Status: 503, Body: unavailableBody}, stream)
	p := newTestProvider(t, srv.URL, Options{})
	delays := fakeClock(p)
	s := fixturetest.Drain(t, p.Stream(context.Background(), hello))
	if s.Err != nil || s.Response == nil || s.Text != "Olá!" || len(*delays) != 1 {
		t.Errorf("text %q, done %v, err %v, delays %v", s.Text, s.Response != nil, s.Err, *delays)
	}
}

func TestQuotaExhaustedBeyondPatience(t *testing.T) {
	// The server asks for 90 s, more than the policy will block for: the
	// error comes back at once, carrying the delay for the caller.
	srv := fixturetest.NewServer(t, fixturetest.Answer{Status: 429, Body: exhaustedBody})
	p := newTestProvider(t, srv.URL, Options{})
	delays := fakeClock(p)
	_, err := p.Complete(context.Background(), hello)
	var pe *llm.ProviderError
	if !errors.As(err, &pe) || pe.Status != 429 || pe.Code != "RESOURCE_EXHAUSTED" || !pe.Retryable || pe.RetryAfter != 90*time.Second {
		t.Fatalf("err = %#v", err)
	}
	if len(*delays) != 0 || len(srv.Requests()) != 1 {
		t.Errorf("waited %v over %d requests", *delays, len(srv.Requests()))
	}
}

func TestInvalidArgumentNotRetried(t *testing.T) {
	srv := fixturetest.NewServer(t, fixturetest.Answer{Status: 400, Body: `{"error":{"code":400,"message":"* GenerateContentRequest.tools[0].function_declarations[0].parameters.properties: should be non-empty for OBJECT type","status":"INVALID_ARGUMENT"}}`})
	p := newTestProvider(t, srv.URL, Options{})
	delays := fakeClock(p)
	_, err := p.Complete(context.Background(), hello)
	var pe *llm.ProviderError
	if !errors.As(err, &pe) || pe.Status != 400 || pe.Code != "INVALID_ARGUMENT" || pe.Retryable || !strings.Contains(pe.Message, "should be non-empty") {
		t.Fatalf("err = %#v", err)
	}
	if len(*delays) != 0 || len(srv.Requests()) != 1 {
		t.Errorf("a 400 was retried")
	}
}

// TestMissingAPIKeyNamesTheVariable also checks that the key is read at
// each request: the same Provider works once the variable is set.
func TestMissingAPIKeyNamesTheVariable(t *testing.T) {
	t.Setenv("GEMINI_API_KEY", "")
	srv := fixturetest.NewServer(t, simpleAnswer(t))
	p, err := New(Options{Model: flash, BaseURL: srv.URL, Headers: map[string]string{"X-Goog-User-Project": "proj"}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Complete(context.Background(), hello)
	if !errors.Is(err, ErrNoAPIKey) || !strings.Contains(err.Error(), "GEMINI_API_KEY") {
		t.Errorf("err = %v, want ErrNoAPIKey naming GEMINI_API_KEY", err)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests sent without a key", n)
	}
	t.Setenv("GEMINI_API_KEY", "from-env")
	if _, err := p.Complete(context.Background(), hello); err != nil {
		t.Fatal(err)
	}
	if h := srv.Request(t, 0).Header; h.Get("X-Goog-Api-Key") != "from-env" || h.Get("X-Goog-User-Project") != "proj" {
		t.Errorf("headers %v", h)
	}
}

// A chunk of text, the start of an answer without a finishReason.
const firstChunk = `data: {"candidates":[{"content":{"parts":[{"text":"Ol"}],"role":"model"},"index":0}],"modelVersion":"gemini-2.5-flash"}` + "\r\n\r\n"

func sseAnswer(body string) fixturetest.Answer {
	return fixturetest.Answer{Status: 200, Body: body, Header: http.Header{"Content-Type": {"text/event-stream"}}}
}

func TestStreamErrorChunk(t *testing.T) {
	body := firstChunk + `data: {"error":{"code":503,"message":"The model is overloaded.","status":"UNAVAILABLE"}}` + "\r\n\r\n"
	srv := fixturetest.NewServer(t, sseAnswer(body))
	p := newTestProvider(t, srv.URL, Options{})
	s := fixturetest.Drain(t, p.Stream(context.Background(), hello))
	var pe *llm.ProviderError
	if s.Text != "Ol" || s.Response != nil || !errors.As(s.Err, &pe) || pe.Code != "UNAVAILABLE" || pe.Status != 503 || !pe.Retryable {
		t.Fatalf("text %q, done %v, err %#v", s.Text, s.Response != nil, s.Err)
	}
	if len(srv.Requests()) != 1 {
		t.Error("a stream that produced events was retried")
	}
}

func TestStreamEndsWithoutFinishReason(t *testing.T) {
	srv := fixturetest.NewServer(t, sseAnswer(firstChunk))
	p := newTestProvider(t, srv.URL, Options{})
	s := fixturetest.Drain(t, p.Stream(context.Background(), hello))
	if s.Text != "Ol" || s.Response != nil || !errors.Is(s.Err, llm.ErrIncompleteStream) || !llm.IsRetryable(s.Err) {
		t.Errorf("text %q, done %v, err %v; want a retryable ErrIncompleteStream", s.Text, s.Response != nil, s.Err)
	}
}

func TestStreamConnectionDrops(t *testing.T) {
	// The server closes the connection mid-chunk: the client sees an
	// unexpected EOF.
	cut := sseAnswer(firstChunk + `data: {"candidates":[{"content":{"par`)
	cut.Cut = true
	srv := fixturetest.NewServer(t, cut)
	p := newTestProvider(t, srv.URL, Options{})
	s := fixturetest.Drain(t, p.Stream(context.Background(), hello))
	if s.Text != "Ol" || !errors.Is(s.Err, llm.ErrIncompleteStream) || !llm.IsRetryable(s.Err) {
		t.Errorf("text %q, err %v", s.Text, s.Err)
	}
}

func TestStreamMalformedChunk(t *testing.T) {
	srv := fixturetest.NewServer(t, sseAnswer(firstChunk+"data: {oops\r\n\r\n"))
	p := newTestProvider(t, srv.URL, Options{})
	s := fixturetest.Drain(t, p.Stream(context.Background(), hello))
	var pe *llm.ProviderError
	if !errors.As(s.Err, &pe) || pe.Retryable || !strings.Contains(pe.Message, "malformed stream chunk") {
		t.Errorf("err = %v", s.Err)
	}
}

// stallingServer sends the start of an answer, then stays silent until
// the client goes away.
func stallingServer(t *testing.T) *fixturetest.Server {
	return fixturetest.NewServer(t, fixturetest.Answer{Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: firstChunk, Stall: true})
}

func TestStreamCancelledMidway(t *testing.T) {
	srv := stallingServer(t)
	p := newTestProvider(t, srv.URL, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var text string
	var err error
	for ev, e := range p.Stream(ctx, hello) {
		if e != nil {
			err = e
			break
		}
		if ev.Type == llm.StreamText {
			text += ev.Text
			cancel()
		}
	}
	var pe *llm.ProviderError
	if text != "Ol" || !errors.Is(err, context.Canceled) || errors.As(err, &pe) {
		t.Errorf("text %q, err %v; want Ol then a plain context.Canceled", text, err)
	}
	srv.WaitClosed(t, 0)
}

func TestStreamStoppedEarlyReleasesConnection(t *testing.T) {
	srv := stallingServer(t)
	p := newTestProvider(t, srv.URL, Options{})
	before := runtime.NumGoroutine()
	for ev, err := range p.Stream(context.Background(), hello) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == llm.StreamText {
			break
		}
	}
	srv.WaitClosed(t, 0)
	p.cfg.client.CloseIdleConnections()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			t.Fatalf("goroutines: %d before, %d after", before, runtime.NumGoroutine())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestStreamIdleTimeout(t *testing.T) {
	srv := stallingServer(t)
	p := newTestProvider(t, srv.URL, Options{StreamIdleTimeout: 50 * time.Millisecond})
	s := fixturetest.Drain(t, p.Stream(context.Background(), hello))
	if s.Text != "Ol" || s.Response != nil || !errors.Is(s.Err, llm.ErrIncompleteStream) || !errors.Is(s.Err, httpx.ErrStreamIdle) {
		t.Errorf("text %q, done %v, err %v", s.Text, s.Response != nil, s.Err)
	}
	srv.WaitClosed(t, 0)
}
