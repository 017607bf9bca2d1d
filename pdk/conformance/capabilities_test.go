package conformance_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/autoagent-go/autoagent/host"
	"github.com/autoagent-go/autoagent/manifest"
	"github.com/autoagent-go/autoagent/tool"
)

// logSink records the guests' log messages the host passes on.
type logSink struct {
	mu   sync.Mutex
	msgs []string
}

func (s *logSink) Enabled(context.Context, slog.Level) bool { return true }
func (s *logSink) Handle(_ context.Context, r slog.Record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.msgs = append(s.msgs, r.Level.String()+" "+r.Message)
	return nil
}
func (s *logSink) WithAttrs([]slog.Attr) slog.Handler { return s }
func (s *logSink) WithGroup(string) slog.Handler      { return s }

// TestGoPDKCapabilities calls each capability function of the Go PDK
// through the autoagent host: logging, instance variables, config and
// granted environment variables, HTTP, key-value storage and files.
func TestGoPDKCapabilities(t *testing.T) {
	wasm, err := os.ReadFile(filepath.Join("build", "capabilities.go.wasm"))
	if err != nil {
		t.Skipf("%v: run `make pdk-conformance`", err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.WriteHeader(http.StatusCreated)
		fmt.Fprintf(w, "%s %s %s", r.Method, r.Header.Get("Content-Type"), body)
	}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f.txt"), []byte("file text"), 0o644); err != nil {
		t.Fatal(err)
	}
	sink := &logSink{}
	h := newHost(t, host.Options{
		Logger:    slog.New(sink),
		LookupEnv: func(k string) (string, bool) { return map[string]string{"CAPS_ENV": "from env"}[k], k == "CAPS_ENV" },
	})
	grants, err := manifest.ParseGrants([]string{"kv:caps", "net:127.0.0.1:" + port, "env:CAPS_ENV", "fs.read:" + dir})
	if err != nil {
		t.Fatal(err)
	}
	load := func(reuse bool) *host.Loaded {
		l, err := h.Load(context.Background(), host.Module{Name: "capabilities", Bytes: wasm, Grants: grants,
			Config: map[string]string{"greeting": "hello"}, Reuse: reuse})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close(context.Background()) })
		return l
	}
	call := func(l *host.Loaded, name, args string) tool.Result {
		t.Helper()
		tl, _ := l.Tool(name)
		res, err := tl.Call(context.Background(), tool.Call{Name: name, Arguments: json.RawMessage(args)})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return res
	}
	text := func(l *host.Loaded, name, args string) string {
		t.Helper()
		res := call(l, name, args)
		if res.IsError {
			t.Fatalf("%s(%s): %s", name, args, res.Text())
		}
		return res.Text()
	}
	fresh, reused := load(false), load(true)

	if diff := cmp.Diff([]string{"kv:caps", "net:127.0.0.1"}, fresh.Describe().Capabilities); diff != "" {
		t.Errorf("requested capabilities (-want +got):\n%s", diff)
	}

	text(fresh, "log", `{"level":2,"message":"an info line"}`)
	text(fresh, "log", `{"level":4,"message":"an error line"}`)
	sink.mu.Lock()
	logged := slices.Clone(sink.msgs)
	sink.mu.Unlock()
	for _, want := range []string{"INFO an info line", "ERROR an error line"} {
		if !slices.Contains(logged, want) {
			t.Errorf("log %q not passed to the host's logger (got %q)", want, logged)
		}
	}

	// Variables round-trip within a call, and never carry over between the
	// fresh instances the host uses by default. (A reused instance may keep
	// them, but which pooled instance serves a call is the host's choice.)
	if a, b := text(fresh, "counter", `{"key":"n"}`), text(fresh, "counter", `{"key":"n"}`); a != "1" || b != "1" {
		t.Errorf("fresh instances counted %s, %s; want 1, 1", a, b)
	}
	if got := text(reused, "counter", `{"key":"n"}`); got != "1" {
		t.Errorf("first call of a reused module counted %s, want 1", got)
	}

	if got := text(fresh, "config", `{"key":"greeting"}`); got != "hello" {
		t.Errorf("config greeting = %q", got)
	}
	if got := text(fresh, "config", `{"key":"CAPS_ENV"}`); got != "from env" {
		t.Errorf("config CAPS_ENV = %q (granted env: variables are config too)", got)
	}
	if got := text(fresh, "env", `{"key":"CAPS_ENV"}`); got != "from env" {
		t.Errorf("os.Getenv(CAPS_ENV) = %q", got)
	}
	if res := call(fresh, "config", `{"key":"HOME"}`); !res.IsError {
		t.Errorf("config HOME = %q: the host environment leaked", res.Text())
	}

	var f struct {
		Status int
		Body   string
	}
	res := call(fresh, "fetch", fmt.Sprintf(`{"method":"POST","url":%q,"header":{"Content-Type":"text/plain"},"body":"payload"}`, srv.URL))
	if err := json.Unmarshal(res.StructuredContent, &f); err != nil || f.Status != 201 || f.Body != "POST text/plain payload" {
		t.Errorf("fetch = %+v (%v) %s", f, err, res.Text())
	}

	for _, ns := range []string{"caps", ""} {
		var kv struct {
			Before string
			Found  bool
			Keys   []string
			After  bool `json:"after_delete"`
		}
		res := call(fresh, "kv", fmt.Sprintf(`{"namespace":%q,"key":"k1","value":"v1"}`, ns))
		if err := json.Unmarshal(res.StructuredContent, &kv); err != nil || kv.Before != "" || !kv.Found || !slices.Equal(kv.Keys, []string{"k1"}) || kv.After {
			t.Errorf("kv in namespace %q = %+v (%v) %s", ns, kv, err, res.Text())
		}
	}
	if res := call(fresh, "kv", `{"namespace":"other","key":"k","value":"v"}`); !res.IsError || !strings.Contains(res.Text(), "kv:") {
		t.Errorf("kv in an ungranted namespace: %s, want a kv: refusal", res.Text())
	}

	if got := text(fresh, "read", fmt.Sprintf(`{"path":%q}`, filepath.Join(dir, "f.txt"))); got != "file text" {
		t.Errorf("read = %q", got)
	}
}
