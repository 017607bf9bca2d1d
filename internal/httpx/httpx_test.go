package httpx

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/google/go-cmp/cmp"
)

func TestPostSuccessSendsHeadersAndBody(t *testing.T) {
	var got *http.Request
	var gotBody string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r
		b, _ := io.ReadAll(r.Body)
		gotBody = string(b)
		io.WriteString(w, `{"ok":true}`)
	}))
	defer srv.Close()
	resp, err := Post(context.Background(), Request{
		Provider: "test", Client: srv.Client(), URL: srv.URL + "/v1/x",
		Header: http.Header{"Authorization": {"Bearer k"}, "Accept": {"text/event-stream"}},
		Body:   []byte(`{"a":1}`),
	})
	if err != nil {
		t.Fatal(err)
	}
	var v struct{ OK bool }
	if err := DecodeJSON("test", resp, &v); err != nil || !v.OK {
		t.Fatalf("DecodeJSON = %+v, %v", v, err)
	}
	if got.Method != http.MethodPost || got.URL.Path != "/v1/x" || gotBody != `{"a":1}` {
		t.Errorf("request = %s %s %q", got.Method, got.URL.Path, gotBody)
	}
	for k, want := range map[string]string{
		"Authorization": "Bearer k", "Accept": "text/event-stream",
		"Content-Type": "application/json", "User-Agent": UserAgent,
	} {
		if v := got.Header.Get(k); v != want {
			t.Errorf("header %s = %q, want %q", k, v, want)
		}
	}
}

func TestPostErrors(t *testing.T) {
	tests := []struct {
		name    string
		status  int
		headers map[string]string
		body    string
		parse   ParseErrorFunc
		want    llm.ProviderError
	}{
		{
			// Hand-written: the recordings hold no OpenAI 429; the body
			// follows OpenAI's documented error shape.
			name:    "429 with Retry-After and request id",
			status:  429,
			headers: map[string]string{"Retry-After": "3", "X-Request-Id": "req_1"},
			body:    `{"error":{"message":"Rate limit reached","type":"requests","param":null,"code":"rate_limit_exceeded"}}`,
			want: llm.ProviderError{Provider: "test", Status: 429, Code: "rate_limit_exceeded", Message: "Rate limit reached",
				Retryable: true, RetryAfter: 3 * time.Second, RequestID: "req_1"},
		},
		{
			name:    "400 is not retryable",
			status:  400,
			headers: map[string]string{"Request-Id": "req_a"},
			body:    `{"error":{"message":"Unsupported parameter: 'max_tokens'","type":"invalid_request_error","param":"max_tokens","code":"unsupported_parameter"}}`,
			want: llm.ProviderError{Provider: "test", Status: 400, Code: "unsupported_parameter",
				Message: "Unsupported parameter: 'max_tokens'", RequestID: "req_a"},
		},
		{
			// Hand-written: a proxy's HTML page in front of a provider.
			name:   "502 HTML page",
			status: 502,
			body:   "<html><body>Bad gateway</body></html>\n",
			want: llm.ProviderError{Provider: "test", Status: 502, Message: "<html><body>Bad gateway</body></html>",
				Retryable: true},
		},
		{
			name:   "empty body gets the status text",
			status: 503,
			want:   llm.ProviderError{Provider: "test", Status: 503, Message: "Service Unavailable", Retryable: true},
		},
		{
			name:   "provider parser can veto a retry",
			status: 429,
			body:   `{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","code":"insufficient_quota"}}`,
			parse: func(status int, h http.Header, body []byte) ErrorDetail {
				d := ParseJSONError(status, h, body)
				d.NotRetryable = d.Code == "insufficient_quota"
				return d
			},
			want: llm.ProviderError{Provider: "test", Status: 429, Code: "insufficient_quota",
				Message: "You exceeded your current quota"},
		},
		{
			// Hand-written: the recordings hold no x-should-retry header.
			// Anthropic's and OpenAI's servers send it; their own SDKs
			// obey it over the status.
			name:    "x-should-retry false vetoes a 500",
			status:  500,
			headers: map[string]string{"X-Should-Retry": "false", "Request-Id": "req_x"},
			body:    `{"type":"error","error":{"type":"api_error","message":"Internal server error"}}`,
			want: llm.ProviderError{Provider: "test", Status: 500, Code: "api_error", Message: "Internal server error",
				RequestID: "req_x"},
		},
		{
			name:    "x-should-retry true makes a 400 retryable",
			status:  400,
			headers: map[string]string{"x-should-retry": "true"},
			body:    `{"type":"error","error":{"type":"invalid_request_error","message":"try again"}}`,
			want: llm.ProviderError{Provider: "test", Status: 400, Code: "invalid_request_error", Message: "try again",
				Retryable: true},
		},
		{
			name:    "x-should-retry false wins over a parser's forced retry",
			status:  503,
			headers: map[string]string{"X-Should-Retry": "false"},
			body:    `{"error":{"message":"m","type":"t"}}`,
			parse: func(status int, h http.Header, body []byte) ErrorDetail {
				d := ParseJSONError(status, h, body)
				d.ShouldRetry = true
				return d
			},
			want: llm.ProviderError{Provider: "test", Status: 503, Code: "t", Message: "m"},
		},
		{
			name:    "x-should-retry with another value is ignored",
			status:  503,
			headers: map[string]string{"X-Should-Retry": "maybe"},
			want:    llm.ProviderError{Provider: "test", Status: 503, Message: "Service Unavailable", Retryable: true},
		},
		{
			name:    "retry hint in the body when no header",
			status:  429,
			headers: map[string]string{},
			body:    `{"error":{"code":429,"message":"quota","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"12s"}]}}`,
			want: llm.ProviderError{Provider: "test", Status: 429, Code: "RESOURCE_EXHAUSTED", Message: "quota",
				Retryable: true, RetryAfter: 12 * time.Second},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				for k, v := range tt.headers {
					w.Header().Set(k, v)
				}
				w.WriteHeader(tt.status)
				io.WriteString(w, tt.body)
			}))
			defer srv.Close()
			resp, err := Post(context.Background(), Request{Provider: "test", Client: srv.Client(), URL: srv.URL, ParseError: tt.parse})
			if resp != nil {
				t.Fatalf("got a response for status %d", tt.status)
			}
			var pe *llm.ProviderError
			if !errors.As(err, &pe) {
				t.Fatalf("err = %T %v, want *llm.ProviderError", err, err)
			}
			if diff := cmp.Diff(tt.want, *pe); diff != "" {
				t.Errorf("ProviderError (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPostErrorBodyIsBounded(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(500)
		// Far more than MaxErrorBody: the client must not read it all.
		chunk := strings.Repeat("x", 1<<16)
		for range 64 {
			if _, err := io.WriteString(w, chunk); err != nil {
				return
			}
		}
	}))
	defer srv.Close()
	_, err := Post(context.Background(), Request{Provider: "test", Client: srv.Client(), URL: srv.URL})
	var pe *llm.ProviderError
	if !errors.As(err, &pe) || pe.Status != 500 || len(pe.Message) > 600 {
		t.Fatalf("err = %v (message %d bytes)", err, len(pe.Message))
	}
}

func TestPostConnectionRefusedIsRetryable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	_, err := Post(context.Background(), Request{Provider: "test", URL: url})
	var pe *llm.ProviderError
	if !errors.As(err, &pe) || pe.Status != 0 || !pe.Retryable || pe.Err == nil {
		t.Fatalf("err = %#v, want a retryable status-0 ProviderError wrapping the cause", err)
	}
}

func TestPostCancelledIsNotAProviderError(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	}))
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel)
	_, err := Post(ctx, Request{Provider: "test", Client: srv.Client(), URL: srv.URL})
	var pe *llm.ProviderError
	if !errors.Is(err, context.Canceled) || errors.As(err, &pe) {
		t.Fatalf("err = %v, want context.Canceled and no ProviderError", err)
	}
}

func TestTransportErrorUnknownHostNotRetryable(t *testing.T) {
	err := TransportError(context.Background(), "test", &net.DNSError{Err: "no such host", Name: "api.invalid", IsNotFound: true})
	if llm.IsRetryable(err) {
		t.Fatalf("unknown host should not be retried: %v", err)
	}
	err = TransportError(context.Background(), "test", &net.DNSError{Err: "timeout", Name: "api.example", IsTimeout: true})
	if !llm.IsRetryable(err) {
		t.Fatalf("DNS timeout should be retried: %v", err)
	}
}

func TestDecodeJSONInvalid(t *testing.T) {
	resp := &http.Response{StatusCode: 200, Header: http.Header{"X-Request-Id": {"r1"}}, Body: io.NopCloser(strings.NewReader("not json"))}
	var v map[string]any
	err := DecodeJSON("test", resp, &v)
	var pe *llm.ProviderError
	if !errors.As(err, &pe) || pe.Retryable || pe.RequestID != "r1" || !strings.Contains(pe.Message, "not json") {
		t.Fatalf("err = %v", err)
	}
}

func TestParseJSONError(t *testing.T) {
	tests := []struct {
		name string
		body string
		want ErrorDetail
	}{
		{"anthropic", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`,
			ErrorDetail{Code: "overloaded_error", Message: "Overloaded"}},
		{"gemini list", `[{"error":{"code":503,"message":"The model is overloaded.","status":"UNAVAILABLE"}}]`,
			ErrorDetail{Code: "UNAVAILABLE", Message: "The model is overloaded."}},
		{"string error", `{"error":"model 'x' not found"}`, ErrorDetail{Message: "model 'x' not found"}},
		{"vllm", `{"object":"error","message":"bad","type":"BadRequestError","code":400}`,
			ErrorDetail{Code: "BadRequestError", Message: "bad"}},
		{"fastapi detail", `{"detail":"Not authenticated"}`, ErrorDetail{Message: "Not authenticated"}},
		{"openai null code falls back to type", `{"error":{"message":"m","type":"server_error","code":null}}`,
			ErrorDetail{Code: "server_error", Message: "m"}},
		{"plain text", "upstream connect error\n", ErrorDetail{Message: "upstream connect error"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, ParseJSONError(500, nil, []byte(tt.body))); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestMergeJSON(t *testing.T) {
	body := []byte(`{"model":"m","messages":[1],"opts":{"a":1,"b":{"c":2}}}`)
	extra := map[string]any{
		"reasoning_effort": "high",
		"messages":         []any{2, 3},
		"opts":             map[string]any{"b": map[string]any{"d": 4}, "e": nil},
	}
	out, err := MergeJSON(body, extra)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"messages":[2,3],"model":"m","opts":{"a":1,"b":{"c":2,"d":4},"e":null},"reasoning_effort":"high"}`
	if string(out) != want {
		t.Errorf("MergeJSON = %s\nwant %s", out, want)
	}
	if same, _ := MergeJSON(body, nil); string(same) != string(body) {
		t.Errorf("empty extra changed the body")
	}
	for _, bad := range []string{`[1]`, `null`, `{"a":`, ``} {
		if _, err := MergeJSON([]byte(bad), extra); err == nil {
			t.Errorf("merging into %q succeeded", bad)
		}
	}
	// The merged nested map must not be the caller's: a second merge into
	// the result must leave extra as it was.
	dst := map[string]any{}
	deepMerge(dst, extra)
	deepMerge(dst, map[string]any{"opts": map[string]any{"b": map[string]any{"z": 1}}})
	if _, leaked := extra["opts"].(map[string]any)["b"].(map[string]any)["z"]; leaked {
		t.Errorf("deepMerge shared a nested map with its source")
	}
}

func TestAPIKey(t *testing.T) {
	t.Setenv("P1_TEST_KEY", "from-env")
	if k, err := APIKey("openai", "explicit", "P1_TEST_KEY"); k != "explicit" || err != nil {
		t.Errorf("explicit key: %q, %v", k, err)
	}
	if k, err := APIKey("openai", "", "P1_TEST_KEY"); k != "from-env" || err != nil {
		t.Errorf("env key: %q, %v", k, err)
	}
	_, err := APIKey("openai", "", "P1_TEST_MISSING_KEY")
	if !errors.Is(err, ErrNoAPIKey) || !strings.Contains(err.Error(), "P1_TEST_MISSING_KEY") {
		t.Errorf("missing key error %v does not name the variable", err)
	}
}

func TestWatchIdle(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "data: first\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done() // then silence
	}))
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	resp, err := Post(ctx, Request{Provider: "test", Client: srv.Client(), URL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	body := WatchIdle(resp.Body, 50*time.Millisecond, cancel)
	defer body.Close()
	b, err := io.ReadAll(body)
	if string(b) != "data: first\n\n" || !errors.Is(err, ErrStreamIdle) {
		t.Fatalf("read %q, %v; want the first event then ErrStreamIdle", b, err)
	}
}

// TestMergeJSONKeepsNumbers: merging must not route numbers through
// float64, which rounds integers above 2^53 (ids in tool arguments),
// rewrites the literal of others and cannot hold some at all.
func TestMergeJSONKeepsNumbers(t *testing.T) {
	for _, tt := range []struct {
		name string
		body string
		want []string
	}{
		{"integers above 2^53",
			`{"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"f","input":{"order_id":9007199254740993,"big":12345678901234567890}}]}],"max_tokens":1024}`,
			[]string{`"order_id":9007199254740993`, `"big":12345678901234567890`, `"max_tokens":1024`}},
		{"literals kept", `{"args":{"ratio":0.1,"price":1.50,"neg":-0}}`, []string{`"ratio":0.1`, `"price":1.50`, `"neg":-0`}},
		{"beyond float64", `{"args":{"exp":1e400}}`, []string{`"exp":1e400`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, err := MergeJSON([]byte(tt.body), map[string]any{"top_k": 5})
			if err != nil {
				t.Fatal(err)
			}
			for _, lit := range append(tt.want, `"top_k":5`) {
				if !strings.Contains(string(out), lit) {
					t.Errorf("merged body lost %s:\n%s", lit, out)
				}
			}
		})
	}
	if _, err := MergeJSON([]byte(`{"a":1} {"b":2}`), map[string]any{"c": 3}); err == nil {
		t.Errorf("merging into a body with trailing data succeeded")
	}
}
