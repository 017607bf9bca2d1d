package catalog_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/providers/catalog"
	"github.com/autoagent-go/autoagent/providers/openai"
)

// The names NewProvider builds that speak HTTP to a vendor and need a key.
var httpProviders = []string{"openai", "deepseek", "groq", "anthropic", "gemini"}

func TestNewProviderRefusesWhatItCannotBuild(t *testing.T) {
	tests := []struct {
		cfg     catalog.Config
		want    error
		mention string
	}{
		{catalog.Config{Name: "nope"}, catalog.ErrUnknown, "openai-compatible"},
		{catalog.Config{}, catalog.ErrUnknown, "scripted"},
		{catalog.Config{Name: "openai-compatible"}, catalog.ErrMissingSetting, "base URL"},
		{catalog.Config{Name: "scripted"}, catalog.ErrMissingSetting, "script file"},
	}
	for _, tt := range tests {
		p, err := catalog.New(tt.cfg)
		if !errors.Is(err, tt.want) || p != nil {
			t.Errorf("NewProvider(%+v) = %v, %v; want an error wrapping %v", tt.cfg, p, err, tt.want)
			continue
		}
		if !strings.Contains(err.Error(), tt.mention) {
			t.Errorf("NewProvider(%+v): error %q does not mention %q", tt.cfg, err, tt.mention)
		}
	}

	// A missing script file is the scripted provider's own error, not a
	// missing setting.
	_, err := catalog.New(catalog.Config{Name: "scripted", ScriptFile: filepath.Join(t.TempDir(), "none.jsonl")})
	if err == nil || errors.Is(err, catalog.ErrMissingSetting) {
		t.Errorf("scripted with a missing file: %v", err)
	}
}

// Without a key in its default variable, each HTTP provider fails the call
// naming the variable DefaultAPIKeyEnv reports, and sends nothing.
func TestDefaultAPIKeyEnvIsTheVariableProvidersRead(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("a request was sent without a key: %s %s", r.Method, r.URL)
		w.WriteHeader(http.StatusBadRequest)
	}))
	defer srv.Close()
	for _, name := range httpProviders {
		env := catalog.DefaultAPIKeyEnv(name)
		if env == "" {
			t.Errorf("DefaultAPIKeyEnv(%q) is empty", name)
			continue
		}
		t.Setenv(env, "")
		p, err := catalog.New(catalog.Config{Name: name, BaseURL: srv.URL})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		_, err = p.Complete(context.Background(), &llm.Request{Messages: []llm.Message{llm.UserText("hi")}})
		if !errors.Is(err, openai.ErrNoAPIKey) || !strings.Contains(err.Error(), env) {
			t.Errorf("%s without a key: %v; want an error naming %s", name, err, env)
		}
	}
	for _, name := range []string{"openai-compatible", "scripted", "nope"} {
		if env := catalog.DefaultAPIKeyEnv(name); env != "" {
			t.Errorf("DefaultAPIKeyEnv(%q) = %q, want none", name, env)
		}
	}
}

// captured is what a test server saw of one request.
type captured struct {
	path, body string
	header     http.Header
}

// captureServer answers every request with 400 (not retried) and keeps it.
func captureServer(t *testing.T) (*httptest.Server, func() []captured) {
	t.Helper()
	var mu sync.Mutex
	var seen []captured
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		seen = append(seen, captured{r.URL.Path, string(b), r.Header.Clone()})
		mu.Unlock()
		http.Error(w, `{"error":{"message":"test server"}}`, http.StatusBadRequest)
	}))
	t.Cleanup(srv.Close)
	return srv, func() []captured {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(seen)
	}
}

// The model defaults to DefaultModel(name), a named model wins, the key
// comes from APIKeyEnv, and the name is read case- and space-insensitively.
func TestNewProviderSendsDefaultModelAndConfiguredKey(t *testing.T) {
	const key = "test-key-not-secret"
	t.Setenv("AUTOAGENT_TEST_KEY", key)
	for _, name := range httpProviders {
		srv, seen := captureServer(t)
		for _, model := range []string{"", "some-other-model"} {
			p, err := catalog.New(catalog.Config{
				Name: " " + strings.ToUpper(name) + " ", Model: model, BaseURL: srv.URL, APIKeyEnv: "AUTOAGENT_TEST_KEY",
			})
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if _, err := p.Complete(context.Background(), &llm.Request{Messages: []llm.Message{llm.UserText("hi")}}); err == nil {
				t.Fatalf("%s: the test server's 400 was not an error", name)
			}
		}
		reqs := seen()
		if len(reqs) != 2 {
			t.Fatalf("%s: %d requests, want 2", name, len(reqs))
		}
		for i, want := range []string{catalog.DefaultModel(name), "some-other-model"} {
			if want == "" {
				t.Fatalf("DefaultModel(%q) is empty", name)
			}
			if r := reqs[i]; !strings.Contains(r.path+r.body, want) {
				t.Errorf("%s request %d does not name model %q: %s %s", name, i, want, r.path, r.body)
			}
			if !slices.ContainsFunc(headerValues(reqs[i].header), func(v string) bool { return strings.Contains(v, key) }) {
				t.Errorf("%s request %d does not carry the key from AUTOAGENT_TEST_KEY: %v", name, i, reqs[i].header)
			}
		}
	}
}

func headerValues(h http.Header) []string {
	var vs []string
	for _, v := range h {
		vs = append(vs, v...)
	}
	return vs
}

// openai-compatible sends no key unless APIKeyEnv names one.
func TestNewProviderCompatibleNeedsNoKey(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "must-not-be-sent")
	srv, seen := captureServer(t)
	p, err := catalog.New(catalog.Config{Name: "openai-compatible", BaseURL: srv.URL, Model: "local"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Complete(context.Background(), &llm.Request{Messages: []llm.Message{llm.UserText("hi")}}); errors.Is(err, openai.ErrNoAPIKey) {
		t.Fatalf("openai-compatible asked for a key: %v", err)
	}
	reqs := seen()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	if auth := reqs[0].header.Get("Authorization"); auth != "" {
		t.Errorf("openai-compatible sent Authorization %q with no APIKeyEnv", auth)
	}
}

func TestNewProviderScriptedPlaysTheFile(t *testing.T) {
	script := filepath.Join(t.TempDir(), "script.jsonl")
	if err := os.WriteFile(script, []byte(`{"text":"from the script"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := catalog.New(catalog.Config{Name: "scripted", ScriptFile: script})
	if err != nil {
		t.Fatal(err)
	}
	// Per conversation: two fresh conversations both get the first turn.
	for range 2 {
		resp, err := p.Complete(context.Background(), &llm.Request{Messages: []llm.Message{llm.UserText("hi")}})
		if err != nil {
			t.Fatal(err)
		}
		if got := resp.Message.Text(); got != "from the script" {
			t.Errorf("scripted answer %q", got)
		}
	}
}

func TestProviderNamesIsACopy(t *testing.T) {
	names := catalog.Names()
	names[0] = "changed"
	if got := catalog.Names(); got[0] == "changed" {
		t.Errorf("ProviderNames shares its slice: %v", got)
	}
	for _, name := range catalog.Names() {
		_, err := catalog.New(catalog.Config{Name: name})
		if errors.Is(err, catalog.ErrUnknown) {
			t.Errorf("NewProvider does not know %q, which ProviderNames lists", name)
		}
	}
}

// A literal APIKey is sent instead of the variable's key, and String never
// prints it.
func TestNewProviderSendsALiteralKey(t *testing.T) {
	t.Setenv("AUTOAGENT_TEST_KEY", "from-the-variable")
	for _, name := range httpProviders {
		srv, seen := captureServer(t)
		cfg := catalog.Config{Name: name, BaseURL: srv.URL, APIKey: "literal-key", APIKeyEnv: "AUTOAGENT_TEST_KEY"}
		p, err := catalog.New(cfg)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		p.Complete(context.Background(), &llm.Request{Messages: []llm.Message{llm.UserText("hi")}})
		reqs := seen()
		if len(reqs) != 1 {
			t.Fatalf("%s: %d requests", name, len(reqs))
		}
		vals := headerValues(reqs[0].header)
		if !slices.ContainsFunc(vals, func(v string) bool { return strings.Contains(v, "literal-key") }) ||
			slices.ContainsFunc(vals, func(v string) bool { return strings.Contains(v, "from-the-variable") }) {
			t.Errorf("%s: headers %v, want the literal key only", name, reqs[0].header)
		}
		if s := cfg.String(); strings.Contains(s, "literal-key") || !strings.Contains(s, "api_key=[set]") {
			t.Errorf("Config.String() = %s", s)
		}
	}
}

// MaxRetries reaches the provider: negative sends a retryable failure once.
func TestNewProviderPassesMaxRetries(t *testing.T) {
	for _, name := range httpProviders {
		var mu sync.Mutex
		n := 0
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			n++
			mu.Unlock()
			w.Header().Set("Retry-After", "0")
			http.Error(w, `{"error":{"message":"busy"}}`, http.StatusServiceUnavailable)
		}))
		for _, tc := range []struct{ retries, want int }{{-1, 1}, {1, 2}} {
			mu.Lock()
			n = 0
			mu.Unlock()
			p, err := catalog.New(catalog.Config{Name: name, BaseURL: srv.URL, APIKey: "k", MaxRetries: tc.retries})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := p.Complete(context.Background(), &llm.Request{Messages: []llm.Message{llm.UserText("hi")}}); err == nil {
				t.Fatalf("%s: a 503 was not an error", name)
			}
			mu.Lock()
			got := n
			mu.Unlock()
			if got != tc.want {
				t.Errorf("%s with MaxRetries %d: %d requests, want %d", name, tc.retries, got, tc.want)
			}
		}
		srv.Close()
	}
}

// HTTPNames is every name but scripted.
func TestHTTPNames(t *testing.T) {
	want := slices.DeleteFunc(catalog.Names(), func(n string) bool { return n == "scripted" })
	if got := catalog.HTTPNames(); !slices.Equal(got, want) {
		t.Errorf("HTTPNames() = %v, want %v", got, want)
	}
}

// PromptCaching reaches Anthropic as cache_control marks, and only when set.
func TestNewProviderPromptCaching(t *testing.T) {
	for _, on := range []bool{false, true} {
		srv, seen := captureServer(t)
		p, err := catalog.New(catalog.Config{Name: "anthropic", BaseURL: srv.URL, APIKey: "k", PromptCaching: on})
		if err != nil {
			t.Fatal(err)
		}
		p.Complete(context.Background(), &llm.Request{Messages: []llm.Message{llm.SystemText("be brief"), llm.UserText("hi")}})
		reqs := seen()
		if len(reqs) != 1 || strings.Contains(reqs[0].body, "cache_control") != on {
			t.Errorf("PromptCaching %v: body %s", on, reqs[0].body)
		}
	}
}
