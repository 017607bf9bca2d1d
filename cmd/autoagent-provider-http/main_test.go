package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/providers/remote"
)

// Started with runMainEnv set, the test binary is this command.
const runMainEnv = "AUTOAGENT_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) != "" {
		os.Exit(run(os.Args[1:], os.Stderr))
	}
	os.Exit(m.Run())
}

// TestKeyFromTheBackendsOwnEnvironment installs the backend as an operator
// would: a wrapper script in the backends directory puts the key into the
// backend's environment (here from a file the host never reads) and execs
// the binary. The host finds it by name and never holds the key.
func TestKeyFromTheBackendsOwnEnvironment(t *testing.T) {
	const key = "sk-anthropic-test-77aa11bb22cc"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.Header.Get("x-api-key") != key {
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`)
			return
		}
		fmt.Fprint(w, `{"id":"msg_1","type":"message","role":"assistant","model":"claude-test","content":[{"type":"text","text":"hello from anthropic"}],"stop_reason":"end_turn","usage":{"input_tokens":4,"output_tokens":3}}`)
	}))
	defer srv.Close()

	secrets := t.TempDir()
	keyFile := filepath.Join(secrets, "anthropic.key")
	if err := os.WriteFile(keyFile, []byte(key), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	script := "#!/bin/sh\nANTHROPIC_API_KEY=\"$(cat " + keyFile + ")\" exec " + os.Args[0] +
		" --provider anthropic --model claude-test --base-url " + srv.URL + " --max-retries -1 \"$@\"\n"
	if err := os.WriteFile(filepath.Join(dir, "autoagent-provider-claude"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p, err := remote.New(ctx, remote.Options{Dir: dir, Name: "claude", Env: []string{runMainEnv + "=1", "GORACE=atexit_sleep_ms=0"}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	resp, err := p.Complete(ctx, &llm.Request{Messages: []llm.Message{llm.UserText("hi")}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Text() != "hello from anthropic" || p.Name() != "anthropic" {
		t.Errorf("got %q from %q", resp.Message.Text(), p.Name())
	}
	for _, e := range os.Environ() {
		if strings.Contains(e, key) {
			t.Errorf("the host's environment holds the key: %s", e)
		}
	}
}

func TestRunUsage(t *testing.T) {
	for _, tt := range []struct {
		args []string
		code int
	}{
		{nil, 2},
		{[]string{"--provider", "nope"}, 2},
		{[]string{"--provider", "openai", "--api-key-file", "/nonexistent"}, 1},
	} {
		var stderr strings.Builder
		if code := run(tt.args, &stderr); code != tt.code || stderr.Len() == 0 {
			t.Errorf("run(%q) = %d (stderr %q), want %d with a message", tt.args, code, stderr.String(), tt.code)
		}
	}
}
