package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/autoagent-go/autoagent/internal/temporaltest"
)

// startWorkerProcess runs `autoagent worker` in dir until the test ends.
func (e *cliEnv) startWorkerProcess(dir string, args ...string) *bytes.Buffer {
	e.t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"worker"}, args...)...)
	cmd.Env = append(os.Environ(), cliMainEnv+"=1")
	cmd.Dir = dir
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGINT)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	return &errb
}

// run --temporal on a worker of the CLI: the same --json Result as a local
// run, progress per step on stderr; runs list and show see the run; agent
// flags beside --temporal are usage errors; a worker whose manifest lacks
// the module refuses its calls.
func TestRunOnTemporal(t *testing.T) {
	srv := temporaltest.Start(t) // before newCLIEnv changes directory
	e := newCLIEnv(t)
	e.add("echo.wasm")
	e.mustRun(0, "tools", "approve", filepath.Join(e.plugins, "echo.wasm"), "--yes", "--by", "tester")
	script := e.writeScript(
		`{"tool_calls":[{"id":"call_1","name":"echo","arguments":{"msg":"héllo"}}],"usage":{"input_tokens":100,"output_tokens":20}}`,
		`{"text":"The tool said héllo.","usage":{"input_tokens":150,"output_tokens":10}}`,
	)
	local := e.mustRun(0, "run", "--provider", "scripted", "--script", script, "--json", "Echo héllo")

	werr := e.startWorkerProcess(e.root, "--temporal", srv.Addr, "--task-queue", "cli", "--provider", "scripted", "--script", script)
	r := e.run("", "run", "--temporal", srv.Addr, "--task-queue", "cli", "--run-id", "cli-1", "--json", "Echo héllo")
	if r.code != 0 {
		t.Fatalf("run --temporal: exit %d\n%s\nworker: %s", r.code, r.stderr, werr)
	}
	if g, w := canonical(t, r.stdout), canonical(t, local.stdout); g != w {
		t.Errorf("run --temporal --json differs from the local run:\n got %s\nwant %s", g, w)
	}
	if !strings.Contains(r.stderr, "run cli-1 started on") || !strings.Contains(r.stderr, "\nstep 2 (") {
		t.Errorf("progress on stderr: %s", r.stderr)
	}

	list := e.mustRun(0, "runs", "list", "--temporal", srv.Addr, "--json")
	if !strings.Contains(list.stdout, `"id": "cli-1"`) || !strings.Contains(list.stdout, `"status": "completed"`) {
		t.Errorf("runs list: %s", list.stdout)
	}
	show := e.mustRun(0, "runs", "show", "--temporal", srv.Addr, "cli-1")
	if !strings.Contains(show.stdout, "run cli-1: done after 2 steps, 250 input and 30 output tokens") {
		t.Errorf("runs show: %s", show.stdout)
	}
	if r := e.run("", "runs", "show", "--temporal", srv.Addr, "nope"); r.code != 1 || !strings.Contains(r.stderr, "no such run: nope") {
		t.Errorf("runs show of an unknown run: %d %s", r.code, r.stderr)
	}
	if r := e.run("", "run", "--temporal", srv.Addr, "--script", script, "hi"); r.code != 2 || !strings.Contains(r.stderr, "uses the worker's agent") {
		t.Errorf("run --temporal --script: %d %s", r.code, r.stderr)
	}
	if r := e.run("", "runs", "approve", "--temporal", srv.Addr, "cli-1", "call_9"); r.code != 1 || !strings.Contains(r.stderr, "run cli-1 has ended (completed): it awaits no decision") {
		t.Errorf("approving a finished run: %d %s", r.code, r.stderr)
	}

	// A worker whose manifest does not approve the module.
	other := t.TempDir()
	if err := os.Mkdir(filepath.Join(other, "plugins"), 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(e.plugins, "echo.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(other, "plugins", "echo.wasm"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	e.startWorkerProcess(other, "--temporal", srv.Addr, "--task-queue", "unapproved", "--provider", "scripted", "--script", script)
	r = e.run("", "run", "--temporal", srv.Addr, "--task-queue", "unapproved", "--json", "Echo héllo")
	if r.code != 0 || !strings.Contains(r.stdout, "unknown tool") {
		t.Errorf("a worker without the approval: exit %d, %s %s", r.code, r.stdout, r.stderr)
	}
}

// canonical re-encodes a JSON document, so that two equal ones compare
// equal as text.
func canonical(t *testing.T, s string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, s)
	}
	b, _ := json.Marshal(v)
	return string(b)
}
