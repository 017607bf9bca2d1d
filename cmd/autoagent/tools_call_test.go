package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autoagent-go/autoagent/tool"
)

func decodeResult(t *testing.T, stdout string) tool.Result {
	t.Helper()
	var r tool.Result
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatalf("stdout is not a result: %v\n%s", err, stdout)
	}
	return r
}

func TestToolsCallFile(t *testing.T) {
	e := newCLIEnv(t)
	echo := filepath.Join(e.testdata, "echo.wasm")

	r := e.mustRun(0, "tools", "call", echo, "--tool", "echo", "--args", `{"city":"Oslo"}`)
	if got := decodeResult(t, r.stdout); got.IsError || string(got.StructuredContent) != `{"city":"Oslo"}` {
		t.Errorf("echo: %s", r.stdout)
	}

	// A tool reporting an error: the call ran, exit 0, isError on stdout.
	r = e.mustRun(0, "tools", "call", echo, "--tool", "fail", "--args", `{}`)
	if got := decodeResult(t, r.stdout); !got.IsError || got.Text() != "the city was not found" {
		t.Errorf("fail: %s", r.stdout)
	}

	// A limit: the sandbox stopped the call, exit 1, the error result on
	// stdout and the reason on stderr.
	r = e.mustRun(1, "tools", "call", filepath.Join(e.testdata, "loop.wasm"), "--args", `{}`, "--timeout", "150ms")
	if got := decodeResult(t, r.stdout); !got.IsError || got.Text() != "tool exceeded its time limit of 150ms" {
		t.Errorf("loop stdout: %s", r.stdout)
	}
	if !strings.Contains(r.stderr, "tool exceeded its time limit of 150ms (limit)") {
		t.Errorf("loop stderr: %s", r.stderr)
	}

	r = e.mustRun(1, "tools", "call", filepath.Join(e.testdata, "membomb.wasm"), "--args", `{}`, "--memory", "4")
	if !strings.Contains(r.stdout, "tool exceeded its memory limit of 4 MiB") {
		t.Errorf("membomb: %s", r.stdout)
	}

	// A WASI command with its sidecar, granted exactly --grant.
	wasi := filepath.Join(e.testdata, "wasicmd.wasm")
	r = e.mustRun(0, "tools", "call", wasi, "--tool", "env", "--args", `{"key":"HOME"}`)
	if got := decodeResult(t, r.stdout); got.Text() != "(unset)" {
		t.Errorf("env without a grant: %s", r.stdout)
	}
	t.Setenv("AUTOAGENT_TEST_VAR", "visible")
	r = e.mustRun(0, "tools", "call", wasi, "--tool", "env", "--args", `{"key":"AUTOAGENT_TEST_VAR"}`, "--grant", "env:AUTOAGENT_TEST_VAR")
	if got := decodeResult(t, r.stdout); got.Text() != "visible" {
		t.Errorf("env with a grant: %s", r.stdout)
	}
}

// TestToolsCallRefused shows a refused action: the module asks for a host
// it was not granted.
func TestToolsCallRefused(t *testing.T) {
	e := newCLIEnv(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("served")) }))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	fetch := filepath.Join(e.testdata, "fetch.wasm")

	// Without any net grant the module loads, and its request is refused
	// at call time: exit 1, the refusal as the result.
	r := e.mustRun(1, "tools", "call", fetch, "--args", `{"url":"`+srv.URL+`"}`)
	if got := decodeResult(t, r.stdout); !got.IsError || !strings.Contains(got.Text(), "net: call of extism:host/env.http_request refused: the module was not granted net:HOST") ||
		!strings.Contains(r.stderr, "(denied)") {
		t.Errorf("no grant: stdout %q stderr %q", r.stdout, r.stderr)
	}
	// Granted another host: the request is refused, exit 1.
	r = e.mustRun(1, "tools", "call", fetch, "--args", `{"url":"`+srv.URL+`"}`, "--grant", "net:api.example.com")
	want := "127.0.0.1 is a loopback address; only an explicit IP grant (net:127.0.0.1:" + u.Port() + ") allows it"
	if got := decodeResult(t, r.stdout); !got.IsError || !strings.Contains(got.Text(), want) || !strings.Contains(r.stderr, "(denied)") {
		t.Errorf("refused: stdout %s stderr %s", r.stdout, r.stderr)
	}
	// With the IP grant it is served.
	r = e.mustRun(0, "tools", "call", fetch, "--args", `{"url":"`+srv.URL+`"}`, "--grant", "net:127.0.0.1:"+u.Port())
	if got := decodeResult(t, r.stdout); got.Text() != "served" {
		t.Errorf("granted: %s", r.stdout)
	}
}

func TestToolsCallUsage(t *testing.T) {
	e := newCLIEnv(t)
	echo := filepath.Join(e.testdata, "echo.wasm")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"tools", "call", echo, "--tool", "echo"}, "--args JSON is required"},
		{[]string{"tools", "call", echo, "--tool", "echo", "--args", `[1]`}, "--args must be a JSON object"},
		{[]string{"tools", "call", echo, "--tool", "echo", "--args", `{`}, "--args must be a JSON object"},
		{[]string{"tools", "call", filepath.Join(e.testdata, "wasicmd.wasm"), "--args", `{}`}, "has 8 tools; choose one with --tool (entropy, env, exitcode, flood, listdir, readfile, symlink, writefile)"},
		{[]string{"tools", "call", echo, "--tool", "nope", "--args", `{}`}, `has no tool "nope"`},
		{[]string{"tools", "call", echo, "--tool", "echo", "--args", `{}`, "--grant", "bogus"}, `invalid grant "bogus"`},
		{[]string{"tools", "call", "--args", `{}`}, "want one FILE.wasm or NAME"},
		{[]string{"tools", "call", "echo", "--args", `{}`, "--grant", "clock"}, "runs with its approved grants and limits"},
	} {
		r := e.mustRun(2, c.args...)
		if !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: stderr %q, want %q", c.args, r.stderr, c.want)
		}
	}
}

// TestToolsCallName calls an approved plugin by name with its approved
// grants; a pending one is refused with what to do.
func TestToolsCallName(t *testing.T) {
	e := newCLIEnv(t)
	kv := e.add("kv.wasm")
	r := e.mustRun(1, "tools", "call", "kv", "--args", `{"op":"get","key":"k"}`)
	if !strings.Contains(r.stderr, "plugin kv is pending") || !strings.Contains(r.stderr, "autoagent tools approve") {
		t.Errorf("pending: %s", r.stderr)
	}
	e.mustRun(0, "tools", "approve", kv, "--grant", "kv:notes", "--yes")
	e.mustRun(0, "tools", "call", "kv", "--args", `{"op":"set","key":"k","value":"remembered"}`)
	r = e.mustRun(0, "tools", "call", "kv", "--args", `{"op":"get","key":"k"}`)
	if got := decodeResult(t, r.stdout); got.Text() != "remembered" {
		t.Errorf("get: %s", r.stdout)
	}
	r = e.mustRun(1, "tools", "call", "nothere", "--args", `{}`)
	if !strings.Contains(r.stderr, `no plugin named "nothere"`) {
		t.Errorf("unknown: %s", r.stderr)
	}
}

// TestToolsCallOutputAndNames pins what docs/ARCHITECTURE.md §8 says tools call
// prints (content, structuredContent, isError: isError present even when
// false) and which tool a NAME or a FILE without --tool means: a NAME may
// be a tool of an approved module, and a module with several tools runs
// the one named like it.
func TestToolsCallOutputAndNames(t *testing.T) {
	e := newCLIEnv(t)
	echo := e.add("echo.wasm") // tools: config, echo, fail, failcode, spin
	e.mustRun(0, "tools", "approve", echo, "--yes")

	keys := func(stdout string) map[string]json.RawMessage {
		t.Helper()
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(stdout), &m); err != nil {
			t.Fatalf("stdout is not one JSON object: %v\n%s", err, stdout)
		}
		return m
	}
	for _, args := range [][]string{
		{"tools", "call", echo, "--args", `{"city":"Oslo"}`},   // a FILE: its eponymous tool
		{"tools", "call", "echo", "--args", `{"city":"Oslo"}`}, // the NAME of the module and of its tool
	} {
		r := e.mustRun(0, args...)
		m := keys(r.stdout)
		if string(m["isError"]) != "false" || string(m["structuredContent"]) != `{"city":"Oslo"}` {
			t.Errorf("%v: stdout %s", args, r.stdout)
		}
	}
	// A tool's name that is not the module's.
	r := e.mustRun(0, "tools", "call", "fail", "--args", `{}`)
	if m := keys(r.stdout); string(m["isError"]) != "true" || !strings.Contains(string(m["content"]), "the city was not found") {
		t.Errorf("fail by tool name: stdout %s", r.stdout)
	}
}
