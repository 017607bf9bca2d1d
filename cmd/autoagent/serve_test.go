package main

import (
	"bufio"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// serveProcess is `autoagent serve` in a child process.
type serveProcess struct {
	t    *testing.T
	cmd  *exec.Cmd
	url  string
	mu   sync.Mutex
	errs strings.Builder
	done chan struct{}
}

func (e *cliEnv) startServe(args ...string) *serveProcess {
	e.t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(os.Environ(), cliMainEnv+"=1")
	cmd.Dir = e.root
	pr, pw := io.Pipe()
	cmd.Stderr = pw
	p := &serveProcess{t: e.t, cmd: cmd, done: make(chan struct{})}
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	go func() {
		cmd.Wait()
		pw.Close()
		close(p.done)
	}()
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			line := sc.Text()
			p.mu.Lock()
			p.errs.WriteString(line + "\n")
			p.mu.Unlock()
			if _, rest, ok := strings.Cut(line, "listening on "); ok {
				addr <- strings.Fields(rest)[0]
			}
		}
	}()
	e.t.Cleanup(func() { p.stop(syscall.SIGTERM) })
	select {
	case p.url = <-addr:
	case <-p.done:
		e.t.Fatalf("serve exited: %s", p.stderr())
	case <-time.After(2 * time.Minute):
		e.t.Fatalf("serve did not listen: %s", p.stderr())
	}
	return p
}

func (p *serveProcess) stderr() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.errs.String()
}

// stop sends sig and waits for the process to end.
func (p *serveProcess) stop(sig syscall.Signal) {
	select {
	case <-p.done:
		return
	default:
	}
	p.cmd.Process.Signal(sig)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		p.cmd.Process.Kill()
		<-p.done
	}
}

func (p *serveProcess) do(method, path, body string) (int, map[string]any) {
	p.t.Helper()
	req, err := http.NewRequest(method, p.url+path, strings.NewReader(body))
	if err != nil {
		p.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		p.t.Fatalf("%s %s: %v\nserve: %s", method, path, err, p.stderr())
	}
	defer resp.Body.Close()
	var out map[string]any
	json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

// waitStatus polls a run until it has status want (bounded generously:
// the runs take milliseconds).
func (p *serveProcess) waitStatus(id, want string) map[string]any {
	p.t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		code, run := p.do("GET", "/v1/runs/"+id, "")
		if code == 200 && run["status"] == want {
			return run
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("run %s: %d %v, want status %s\nserve: %s", id, code, run, want, p.stderr())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func firstPending(t *testing.T, run map[string]any) string {
	t.Helper()
	ps, _ := run["pending"].([]any)
	if len(ps) != 1 {
		t.Fatalf("pending: %v", run["pending"])
	}
	return ps[0].(map[string]any)["call_id"].(string)
}

// A serve killed with SIGKILL while one run is paused for approval and
// another is in a tool call: restarted, the paused run is decided and
// finishes, the other is listed as interrupted with its transcript.
func TestServeOutlivesSIGKILL(t *testing.T) {
	e := newCLIEnv(t)
	e.add("echo.wasm")
	// spin runs until its time limit: a call that is going when the
	// server dies.
	e.mustRun(0, "tools", "approve", filepath.Join(e.plugins, "echo.wasm"), "--yes", "--timeout", "10m")
	script := e.writeScript(
		`{"tool_calls":[{"name":"spin","arguments":{"n":1000000000000000000}}]}`,
		`{"text":"finished"}`,
	)
	policy := filepath.Join(e.root, "policy.json")
	if err := os.WriteFile(policy, []byte(`{"default":"allow","rules":[{"tool":"spin","action":"approve","reason":"spin burns CPU"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"--provider", "scripted", "--script", script, "--policy", policy, "--runs", filepath.Join(e.root, "runs")}
	first := e.startServe(args...)
	start := func(p *serveProcess, prompt string) string {
		code, out := p.do("POST", "/v1/runs", fmt.Sprintf(`{"prompt": %q, "background": true}`, prompt))
		if code != http.StatusAccepted || out["id"] == nil {
			t.Fatalf("start: %d %v", code, out)
		}
		return out["id"].(string)
	}
	paused, going := start(first, "pause me"), start(first, "keep me going")
	first.waitStatus(paused, "awaiting_approval")
	run := first.waitStatus(going, "awaiting_approval")
	if code, out := first.do("POST", "/v1/runs/"+going+"/decisions", fmt.Sprintf(`{"decisions":[{"call_id":%q,"approve":true}]}`, firstPending(t, run))); code != http.StatusAccepted {
		t.Fatalf("approve: %d %v", code, out)
	}
	// Killed once the approved call is under way.
	waitEvent(t, first, going, "tool_start")
	first.stop(syscall.SIGKILL)

	second := e.startServe(args...)
	run = second.waitStatus(going, "interrupted")
	msgs := fmt.Sprint(run["messages"])
	if !strings.Contains(msgs, "keep me going") || !strings.Contains(msgs, "spin") {
		t.Fatalf("the interrupted run's transcript: %v", run["messages"])
	}
	run = second.waitStatus(paused, "awaiting_approval")
	code, out := second.do("POST", "/v1/runs/"+paused+"/decisions", fmt.Sprintf(`{"decisions":[{"call_id":%q,"approve":false,"reason":"not after a crash"}]}`, firstPending(t, run)))
	if code != http.StatusAccepted {
		t.Fatalf("decide after restart: %d %v", code, out)
	}
	run = second.waitStatus(paused, "completed")
	res := run["result"].(map[string]any)
	if res["output"] != "finished" || !strings.Contains(fmt.Sprint(res["messages"]), "not after a crash") {
		t.Fatalf("result: %v", res)
	}
	code, list := second.do("GET", "/v1/runs", "")
	if code != 200 || len(list["runs"].([]any)) != 2 {
		t.Fatalf("list: %v", list)
	}
}

// waitEvent waits until the run's events hold one of type typ.
func waitEvent(t *testing.T, p *serveProcess, id, typ string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		if hasEvent(t, p, id, typ) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("run %s: no %s event\nserve: %s", id, typ, p.stderr())
}

// hasEvent reads the run's event stream for a while (the stream of a run
// going stays open) and reports whether it holds an event of type typ.
func hasEvent(t *testing.T, p *serveProcess, id, typ string) bool {
	t.Helper()
	req, _ := http.NewRequest("GET", p.url+"/v1/runs/"+id+"/events", nil)
	client := &http.Client{Timeout: 2 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if sc.Text() == "event: "+typ {
			return true
		}
	}
	return false
}

// serve refuses a non-loopback address without tokens, and bad tokens.
func TestServeUsage(t *testing.T) {
	e := newCLIEnv(t)
	script := e.writeScript(`{"text":"x"}`)
	for _, c := range []struct {
		args []string
		env  string
		says string
	}{
		{[]string{"--addr", "0.0.0.0:0"}, "", "not a loopback address"},
		{[]string{"--addr", "localhost"}, "", "HOST:PORT"},
		{[]string{"--addr", "0.0.0.0:0", "--token-env", "SERVE_TEST_TOKENS"}, "", "not set"},
		{[]string{"--addr", "0.0.0.0:0", "--token-env", "SERVE_TEST_TOKENS"}, "operator:olga:short", "at least 16"},
		{[]string{"--addr", "0.0.0.0:0", "--token-env", "SERVE_TEST_TOKENS"}, "boss:olga:operator-secret-0123456789", "viewer, runner or operator"},
		{[]string{"--webhook", "http://127.0.0.1:1/hook"}, "", "needs --webhook-secret-env"},
		{[]string{"--webhook-secret-env", "SERVE_TEST_TOKENS"}, "webhook-secret-0123456789", "without --webhook"},
		{[]string{"--webhook", "http://127.0.0.1:1/hook", "--webhook-secret-env", "SERVE_TEST_TOKENS"}, "", "not set"},
		{[]string{"--webhook", "http://127.0.0.1:1/hook", "--webhook-secret-env", "SERVE_TEST_TOKENS"}, "short", "at least 16"},
		{[]string{"--webhook", "ftp://127.0.0.1/hook", "--webhook-secret-env", "SERVE_TEST_TOKENS"}, "webhook-secret-0123456789", "http(s)://"},
		{[]string{"--evals", filepath.Join(e.root, "no-such-dir")}, "", "not a directory"},
	} {
		if c.env != "" {
			t.Setenv("SERVE_TEST_TOKENS", c.env)
		} else {
			os.Unsetenv("SERVE_TEST_TOKENS")
		}
		r := e.run("", append([]string{"serve", "--provider", "scripted", "--script", script}, c.args...)...)
		if r.code != 2 || !strings.Contains(r.stderr, c.says) {
			t.Errorf("serve %v: exit %d, stderr %q; want 2 saying %q", c.args, r.code, r.stderr, c.says)
		}
	}
}

// serve --evals runs a case file of the directory (the cases' scripts
// played by the scripted provider) and refuses one outside it; --webhook
// notifies a run's end, signed with the secret of --webhook-secret-env.
func TestServeEvalsAndWebhook(t *testing.T) {
	e := newCLIEnv(t)
	const secret = "webhook-secret-0123456789abcdef"
	t.Setenv("SERVE_TEST_HOOK_SECRET", secret)
	got := make(chan *http.Request, 10)
	bodies := make(chan []byte, 10)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- r
		bodies <- b
	}))
	defer hook.Close()
	evals := filepath.Join(e.root, "evals")
	if err := os.Mkdir(evals, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{
		"cases.jsonl": `{"id": "scripted", "prompt": "x", "scripts": ["run.json"], "expect": {"output_equals": "from the script"}}` + "\n",
		"run.json":    `{"text": "from the script"}` + "\n",
	} {
		if err := os.WriteFile(filepath.Join(evals, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	script := e.writeScript(`{"text":"served"}`)
	p := e.startServe("--provider", "scripted", "--script", script, "--runs", filepath.Join(e.root, "runs"),
		"--evals", evals, "--webhook", hook.URL+"/hook", "--webhook-secret-env", "SERVE_TEST_HOOK_SECRET")

	code, run := p.do("POST", "/v1/runs", `{"prompt": "hi"}`)
	if code != http.StatusOK || run["status"] != "completed" {
		t.Fatalf("run: %d %v", code, run)
	}
	select {
	case r := <-got:
		body := <-bodies
		mac := hmac.New(sha256.New, []byte(secret))
		mac.Write([]byte(r.Header.Get("X-Autoagent-Timestamp") + "." + string(body)))
		if want := "sha256=" + hex.EncodeToString(mac.Sum(nil)); r.Header.Get("X-Autoagent-Signature") != want || r.URL.Path != "/hook" {
			t.Fatalf("notification %s %v: signature %q, want %q", r.URL.Path, r.Header, r.Header.Get("X-Autoagent-Signature"), want)
		}
		if !strings.Contains(string(body), `"type":"run.ended"`) || !strings.Contains(string(body), run["id"].(string)) {
			t.Fatalf("notification: %s", body)
		}
	case <-time.After(2 * time.Minute):
		t.Fatalf("no notification\nserve: %s", p.stderr())
	}

	if code, out := p.do("POST", "/v1/evals", `{"file": "../script.jsonl"}`); code != http.StatusForbidden {
		t.Fatalf("a case file outside: %d %v", code, out)
	}
	code, out := p.do("POST", "/v1/evals", `{"file": "cases.jsonl"}`)
	if code != http.StatusAccepted {
		t.Fatalf("eval: %d %v", code, out)
	}
	id := out["id"].(string)
	deadline := time.Now().Add(2 * time.Minute)
	for {
		_, list := p.do("GET", "/v1/evals", "")
		evs, _ := list["evals"].([]any)
		if len(evs) == 1 && evs[0].(map[string]any)["status"] == "completed" {
			if row := evs[0].(map[string]any); row["passed"] != 1.0 || row["id"] != id {
				t.Fatalf("eval: %v", row)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("evals: %v\nserve: %s", list, p.stderr())
		}
		time.Sleep(20 * time.Millisecond)
	}
	resp, err := http.Get(p.url + "/v1/evals/" + id + "/report.html")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(page), "scripted") {
		t.Fatalf("report page: %d %.300s", resp.StatusCode, page)
	}
}
