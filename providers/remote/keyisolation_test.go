package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/autoagent-go/autoagent/llm"
)

// wireTap records every message the host sends to its backends, as JSON.
type wireTap struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (w *wireTap) record(m any) {
	b, _ := json.Marshal(m)
	w.mu.Lock()
	w.buf.Write(b)
	w.buf.WriteByte('\n')
	w.mu.Unlock()
}

func (w *wireTap) bytes() []byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	return bytes.Clone(w.buf.Bytes())
}

// dialOptions taps unary requests and every message sent on a stream,
// go-plugin's own services included.
func (w *wireTap) dialOptions() []grpc.DialOption {
	return []grpc.DialOption{
		grpc.WithChainUnaryInterceptor(func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
			w.record(req)
			return invoker(ctx, method, req, reply, cc, opts...)
		}),
		grpc.WithChainStreamInterceptor(func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
			cs, err := streamer(ctx, desc, cc, method, opts...)
			if err != nil {
				return nil, err
			}
			return &tappedStream{ClientStream: cs, tap: w}, nil
		}),
	}
}

type tappedStream struct {
	grpc.ClientStream
	tap *wireTap
}

func (s *tappedStream) SendMsg(m any) error {
	s.tap.record(m)
	return s.ClientStream.SendMsg(m)
}

// openAIServer answers Chat Completions requests that carry key, streamed
// or not, and refuses others with OpenAI's 401.
func openAIServer(t *testing.T, key string, authorized *atomic.Int32) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+key {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}`)
			return
		}
		authorized.Add(1)
		var req struct {
			Stream bool `json:"stream"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		if !req.Stream {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"id":"chatcmpl-1","object":"chat.completion","model":"gpt-test","choices":[{"index":0,"message":{"role":"assistant","content":"hello from openai"},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":3,"total_tokens":8}}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for _, chunk := range []string{
			`{"id":"chatcmpl-2","model":"gpt-test","choices":[{"index":0,"delta":{"role":"assistant","content":"hello "}}]}`,
			`{"id":"chatcmpl-2","model":"gpt-test","choices":[{"index":0,"delta":{"content":"streamed"},"finish_reason":"stop"}]}`,
		} {
			fmt.Fprintf(w, "data: %s\n\n", chunk)
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestAPIKeyStaysInTheBackend runs autoagent-provider-http's provider in a
// backend that reads its key from a file, and checks the key reached the
// API while the host never had it: not in the host's environment, not in
// the child's arguments or environment (what the host gave it), not in
// any byte the host sent over the connection.
func TestAPIKeyStaysInTheBackend(t *testing.T) {
	const key = "sk-test-4f1d9c2b7a6e5d3c-isolated"
	var authorized atomic.Int32
	srv := openAIServer(t, key, &authorized)
	keyFile := filepath.Join(t.TempDir(), "openai.key")
	if err := os.WriteFile(keyFile, []byte(key+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tap := &wireTap{}
	opts := Options{
		Path: os.Args[0], Name: "http",
		Args: []string{"--provider", "openai", "--model", "gpt-test", "--base-url", srv.URL + "/v1", "--api-key-file", keyFile, "--max-retries", "-1"},
		Env:  []string{testBackendEnv + "=http", "GORACE=atexit_sleep_ms=0"},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p, err := newDial(ctx, opts, tap.dialOptions())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if p.Name() != "openai" {
		t.Errorf("Name() = %q", p.Name())
	}

	resp, err := p.Complete(ctx, ask("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Text() != "hello from openai" || resp.Usage == nil || resp.Usage.TotalTokens != 8 {
		t.Errorf("Complete = %q, usage %+v", resp.Message.Text(), resp.Usage)
	}
	var streamed strings.Builder
	for ev, err := range p.Stream(ctx, ask("hi")) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == llm.StreamText {
			streamed.WriteString(ev.Text)
		}
	}
	if streamed.String() != "hello streamed" {
		t.Errorf("Stream = %q", streamed.String())
	}
	if n := authorized.Load(); n != 2 {
		t.Fatalf("the API saw the key %d times, want 2", n)
	}

	for _, e := range os.Environ() {
		if strings.Contains(e, key) {
			t.Errorf("the host's environment holds the key: %s", e)
		}
	}
	for _, s := range append(opts.Args, opts.Env...) {
		if strings.Contains(s, key) {
			t.Errorf("the host passed the key: %s", s)
		}
	}
	pid := p.pid()
	for _, f := range []string{"environ", "cmdline"} {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/%s", pid, f))
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte(key)) {
			t.Errorf("the backend's %s, set by the host, holds the key", f)
		}
	}
	sent := tap.bytes()
	if !bytes.Contains(sent, []byte(`"hi"`)) {
		t.Fatalf("the tap saw no request (%d bytes): the check below would prove nothing", len(sent))
	}
	if bytes.Contains(sent, []byte(key)) {
		t.Error("the host sent the key to the backend")
	}
}

func TestMissingKeyIsExplained(t *testing.T) {
	var authorized atomic.Int32
	srv := openAIServer(t, "sk-unused", &authorized)
	p, err := New(context.Background(), Options{
		Path: os.Args[0], Name: "http",
		Args: []string{"--provider", "openai", "--model", "gpt-test", "--base-url", srv.URL + "/v1"},
		Env:  []string{testBackendEnv + "=http", "GORACE=atexit_sleep_ms=0"},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	_, err = p.Complete(context.Background(), ask("hi"))
	if err == nil || !strings.Contains(err.Error(), "OPENAI_API_KEY") {
		t.Errorf("call without a key: %v; want an error naming OPENAI_API_KEY", err)
	}
	if authorized.Load() != 0 {
		t.Error("a request reached the API")
	}
}
