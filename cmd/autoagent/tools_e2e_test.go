package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The operator's path end to end, through the CLI only: drop a module in,
// inspect it, approve it with a grant, let an agent run and `tools call`
// use it (the grant lets it reach a server), then tamper with one byte: the
// module drops to pending, the run no longer gets the tool, `tools call`
// refuses it, and verify fails naming it; finally revoke.
func TestToolsEndToEnd(t *testing.T) {
	e := newCLIEnv(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "hello from the granted host")
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)

	// Drop-in: nothing runs yet.
	fetch := e.add("fetch.wasm")
	r := e.mustRun(0, "tools", "list")
	if !strings.Contains(r.stdout, "pending") {
		t.Fatalf("dropped-in module not pending:\n%s", r.stdout)
	}

	// Inspect: what it offers and asks for.
	r = e.mustRun(0, "tools", "inspect", fetch)
	if !strings.Contains(r.stdout, "requests:  net:example.com") || !strings.Contains(r.stdout, "status:    pending") {
		t.Fatalf("inspect:\n%s", r.stdout)
	}

	// The script plays a model that calls fetch on the test server.
	script := filepath.Join(e.root, "script.json")
	args, _ := json.Marshal(map[string]string{"url": srv.URL + "/"})
	os.WriteFile(script, []byte(`[{"tool_calls": [{"id": "c1", "name": "fetch", "arguments": `+string(args)+`}]}, {"text": "done"}]`), 0o644)
	runAgent := func() string {
		t.Helper()
		r := e.mustRun(0, "run", "--provider", "scripted", "--script", script, "--json", "fetch the page")
		var res struct {
			Messages []json.RawMessage `json:"messages"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
			t.Fatalf("run --json: %v\n%s", err, r.stdout)
		}
		var all []string
		for _, m := range res.Messages {
			all = append(all, string(m))
		}
		return strings.Join(all, "\n")
	}

	// Approve with a grant for the test server: an IP literal, beyond
	// what the module asks for, so it takes --force.
	grant := "net:127.0.0.1:" + u.Port()
	r = e.run("", "tools", "approve", fetch, "--grant", grant, "--yes")
	if r.code != 1 || !strings.Contains(r.stderr, "pass --force") {
		t.Fatalf("approval beyond the request: exit %d %s", r.code, r.stderr)
	}
	e.mustRun(0, "tools", "approve", fetch, "--grant", grant, "--yes", "--force", "--note", "test server")

	// Use: the run's tool result carries the server's answer, and so does
	// a direct call by name.
	if transcript := runAgent(); !strings.Contains(transcript, "hello from the granted host") {
		t.Fatalf("the approved tool did not reach the granted host; transcript:\n%s", transcript)
	}
	r = e.mustRun(0, "tools", "call", "fetch", "--args", string(args))
	if !strings.Contains(r.stdout, "hello from the granted host") {
		t.Fatalf("tools call fetch:\n%s", r.stdout)
	}

	// Tamper: one flipped byte, and the approval no longer applies.
	b, _ := os.ReadFile(fetch)
	b[len(b)-1] ^= 0x01
	os.WriteFile(fetch, b, 0o644)
	if transcript := runAgent(); strings.Contains(transcript, "hello from the granted host") {
		t.Fatalf("a tampered module still ran with its grants; transcript:\n%s", transcript)
	}
	r = e.mustRun(1, "tools", "call", "fetch", "--args", string(args))
	if !strings.Contains(r.stderr, "pending") || strings.Contains(r.stdout, "hello from the granted host") {
		t.Errorf("tools call of the tampered module: stdout %s stderr %s", r.stdout, r.stderr)
	}
	r = e.mustRun(1, "tools", "verify")
	if !strings.Contains(r.stdout, "plugins/fetch.wasm: changed since approval") {
		t.Errorf("verify after tampering:\n%s", r.stdout)
	}
	r = e.mustRun(0, "tools", "list")
	if !strings.Contains(r.stdout, "pending") {
		t.Errorf("tampered module not pending:\n%s", r.stdout)
	}

	// Revoke the (old) approval: gone from the manifest.
	e.mustRun(0, "tools", "revoke", "fetch")
	if e.loadManifest().Len() != 0 {
		t.Error("revoke left an approval")
	}
}
