package serve_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/autoagent-go/autoagent/internal/testsys"

	"github.com/autoagent-go/autoagent/eval"
	"github.com/autoagent-go/autoagent/loop"
	"github.com/autoagent-go/autoagent/providers/scripted"
	"github.com/autoagent-go/autoagent/serve"
)

// evalCases: one case the scripted model passes, one it fails.
const evalCases = `{"id": "says-done", "prompt": "finish", "expect": {"output_equals": "done"}}
{"id": "says-other", "prompt": "finish", "expect": {"output_contains": "something else"}}
`

// evalDir is an eval directory holding cases.jsonl, and beside it (outside
// it) a directory holding secret.jsonl, a valid case file.
func evalDir(t *testing.T) (dir, outside string) {
	t.Helper()
	base := t.TempDir()
	dir, outside = filepath.Join(base, "evals"), filepath.Join(base, "outside")
	for _, d := range []string{dir, outside, filepath.Join(dir, "sub")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{filepath.Join(dir, "cases.jsonl"), filepath.Join(dir, "sub", "more.jsonl"), filepath.Join(outside, "secret.jsonl")} {
		if err := os.WriteFile(f, []byte(evalCases), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir, outside
}

// waitEval polls GET /v1/evals until the eval has status want (bounded: a
// minute, for a loaded machine).
func (e *env) waitEval(id, want string, hdr ...string) map[string]any {
	e.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		list := e.must(http.StatusOK, "GET", "/v1/evals", "", hdr...)
		for _, ev := range list.body["evals"].([]any) {
			m := ev.(map[string]any)
			if m["id"] == id && m["status"] == want {
				return m
			}
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("eval %s: not %s: %s", id, want, list.raw)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A case file of the eval directory runs; its list row, report and page
// are served, and kept across a restart.
func TestEvalRunsACaseFileAndKeepsItsReport(t *testing.T) {
	evals, _ := evalDir(t)
	dir := t.TempDir()
	model := scriptOf(scripted.Turn{Text: "done"})
	e := newEnv(t, serve.Options{Dir: dir, EvalDir: evals}, model)
	r := e.must(http.StatusAccepted, "POST", "/v1/evals", `{"file": "cases.jsonl", "k": 2}`)
	id, _ := r.body["id"].(string)
	if !strings.HasPrefix(id, "eval_") || len(r.body) != 1 {
		t.Fatalf("start: want {\"id\"}, got %s", r.raw)
	}
	row := e.waitEval(id, "completed")
	if row["passed"] != 1.0 || row["failed"] != 1.0 || row["cases"] != 2.0 || row["k"] != 2.0 || row["file"] != "cases.jsonl" || row["started_by"] != "local" {
		t.Fatalf("list row: %v", row)
	}
	check := func(e *env) {
		t.Helper()
		rep := e.must(http.StatusOK, "GET", "/v1/evals/"+id, "")
		cases, _ := rep.body["cases"].([]any)
		if rep.body["k"] != 2.0 || rep.body["runs"] != 4.0 || rep.body["pass_at_1"] != 0.5 || len(cases) != 2 {
			t.Fatalf("report: %s", rep.raw)
		}
		fails := cases[1].(map[string]any)
		if fails["id"] != "says-other" || fails["passes"] != 0.0 || !strings.Contains(toJSON(t, fails["failures"]), "something else") {
			t.Fatalf("the failing case: %v", fails)
		}
		page := e.must(http.StatusOK, "GET", "/v1/evals/"+id+"/report.html", "")
		if ct := page.header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") || !strings.Contains(page.raw, "says-other") || !strings.Contains(page.raw, "<html") {
			t.Fatalf("page: %s %.300s", ct, page.raw)
		}
		// Our attack: the page shares the server's origin with the
		// console; sandboxed, its scripts get an origin of their own.
		if csp := page.header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || !strings.HasPrefix(csp, "sandbox allow-scripts;") {
			t.Fatalf("the page's policy: %q", csp)
		}
	}
	check(e)
	b, _ := os.ReadFile(filepath.Join(dir, "audit.jsonl"))
	if !strings.Contains(string(b), `"action":"eval","by":"local","eval":"`+id+`","file":"cases.jsonl"`) {
		t.Fatalf("audit log: %s", b)
	}
	e.srv.Close()
	again := newEnv(t, serve.Options{Dir: dir, EvalDir: evals}, model)
	again.waitEval(id, "completed")
	check(again)
}

// Cases given inline run without an eval directory; a case file cannot.
func TestEvalInlineCases(t *testing.T) {
	e := newEnv(t, serve.Options{}, scriptOf(scripted.Turn{Text: "done"}))
	r := e.must(http.StatusAccepted, "POST", "/v1/evals", `{"cases": [{"id": "a", "prompt": "x", "expect": {"output_equals": "done"}}]}`)
	id := r.body["id"].(string)
	row := e.waitEval(id, "completed")
	if row["passed"] != 1.0 || row["failed"] != 0.0 || row["file"] != nil {
		t.Fatalf("row: %v", row)
	}
	if rep := e.must(http.StatusOK, "GET", "/v1/evals/"+id, ""); rep.body["pass_hat_k"] != 1.0 {
		t.Fatalf("report: %s", rep.raw)
	}
	r = e.must(http.StatusBadRequest, "POST", "/v1/evals", `{"file": "cases.jsonl"}`)
	if !strings.Contains(r.raw, "no_eval_dir") || !strings.Contains(r.raw, "--evals") {
		t.Fatalf("%s", r.raw)
	}
}

// Our attack: nothing outside the eval directory is read, by whatever
// name: "..", an absolute path (even to a file inside), a symbolic link
// to a file or a directory out of it, a script of a case.
func TestEvalPathFence(t *testing.T) {
	evals, outside := evalDir(t)
	secret := filepath.Join(outside, "secret.jsonl")
	mustLink := func(target, name string) {
		if err := os.Symlink(target, filepath.Join(evals, name)); err != nil {
			t.Fatal(err)
		}
	}
	mustLink(secret, "link.jsonl")
	mustLink(outside, "linkdir")
	mustLink("../outside/secret.jsonl", "rel-link.jsonl")
	if err := os.WriteFile(filepath.Join(outside, "script.json"), []byte(`{"text":"done"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	mustLink(filepath.Join(outside, "script.json"), "script-link.json")
	if err := os.WriteFile(filepath.Join(evals, "escaping-script.jsonl"), []byte(`{"id": "a", "prompt": "x", "scripts": ["../outside/script.json"]}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(evals, "linked-script.jsonl"), []byte(`{"id": "a", "prompt": "x", "scripts": ["script-link.json"]}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := testsys.Mkfifo(filepath.Join(evals, "fifo.jsonl")); err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, serve.Options{EvalDir: evals}, scriptOf(scripted.Turn{Text: "done"}))
	for _, c := range []struct {
		name, body string
		status     int
		code, says string
	}{
		{"dot-dot", `{"file": "../outside/secret.jsonl"}`, 403, "outside_eval_dir", "not a relative name"},
		{"dot-dot inside a name", `{"file": "sub/../../outside/secret.jsonl"}`, 403, "outside_eval_dir", "not a relative name"},
		{"absolute outside", `{"file": "` + secret + `"}`, 403, "outside_eval_dir", "not a relative name"},
		{"absolute inside", `{"file": "` + filepath.Join(evals, "cases.jsonl") + `"}`, 403, "outside_eval_dir", "not a relative name"},
		{"backslash", `{"file": "..\\outside\\secret.jsonl"}`, 403, "outside_eval_dir", "backslash"},
		{"symlink to a file out", `{"file": "link.jsonl"}`, 403, "outside_eval_dir", "cannot be opened"},
		{"relative symlink out", `{"file": "rel-link.jsonl"}`, 403, "outside_eval_dir", "cannot be opened"},
		{"through a symlinked directory", `{"file": "linkdir/secret.jsonl"}`, 403, "outside_eval_dir", "cannot be opened"},
		{"a script out by ..", `{"file": "escaping-script.jsonl"}`, 403, "outside_eval_dir", "script"},
		{"a script out by symlink", `{"file": "linked-script.jsonl"}`, 403, "outside_eval_dir", "script"},
		{"an inline script absolute", `{"cases": [{"id": "a", "prompt": "x", "scripts": ["` + filepath.Join(outside, "script.json") + `"]}]}`, 403, "outside_eval_dir", "absolute"},
		{"an inline script out", `{"cases": [{"id": "a", "prompt": "x", "scripts": ["../outside/script.json"]}]}`, 403, "outside_eval_dir", "script"},
		{"a FIFO", `{"file": "fifo.jsonl"}`, 400, "bad_request", "not a regular file"},
		{"a directory", `{"file": "sub"}`, 400, "bad_request", "not a regular file"},
		{"missing", `{"file": "nope.jsonl"}`, 404, "unknown_case_file", "no such file"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := e.do("POST", "/v1/evals", c.body)
			msg, _ := r.body["error"].(map[string]any)
			if r.status != c.status || msg["code"] != c.code || !strings.Contains(msg["message"].(string), c.says) {
				t.Fatalf("%d %s, want %d %s saying %q", r.status, r.raw, c.status, c.code, c.says)
			}
		})
	}
	// The fence leaves the files inside reachable, through a
	// subdirectory too.
	id := e.must(http.StatusAccepted, "POST", "/v1/evals", `{"file": "sub/more.jsonl"}`).body["id"].(string)
	e.waitEval(id, "completed")
	if list := e.must(http.StatusOK, "GET", "/v1/evals", ""); len(list.body["evals"].([]any)) != 1 {
		t.Fatalf("refused evals were listed: %s", list.raw)
	}
}

// A case's script inside the eval directory reaches the agent factory as
// its absolute path there.
func TestEvalScriptsInsideTheDirectory(t *testing.T) {
	evals, _ := evalDir(t)
	if err := os.WriteFile(filepath.Join(evals, "sub", "s.jsonl"), []byte(`{"id": "a", "prompt": "x", "scripts": ["run.json"], "expect": {"output_equals": "from the script"}}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(evals, "sub", "run.json"), []byte(`{"text":"from the script"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	g := newGate()
	opts := serve.Options{EvalDir: evals, Agent: newAgent(t, scriptOf(scripted.Turn{Text: "done"}), g)}
	var mu sync.Mutex
	var scripts []string
	opts.EvalAgent = func(_ context.Context, c *eval.Case, run int) (*loop.Agent, error) {
		mu.Lock()
		scripts = append(scripts, c.Scripts...)
		mu.Unlock()
		p, err := scripted.Load(c.Scripts[run%len(c.Scripts)], scripted.Options{PerConversation: true})
		if err != nil {
			return nil, err
		}
		a := *opts.Agent
		a.Provider = p
		return &a, nil
	}
	e := newEnv(t, opts, nil)
	id := e.must(http.StatusAccepted, "POST", "/v1/evals", `{"file": "sub/s.jsonl"}`).body["id"].(string)
	if row := e.waitEval(id, "completed"); row["passed"] != 1.0 {
		t.Fatalf("row: %v", row)
	}
	mu.Lock()
	defer mu.Unlock()
	if want := filepath.Join(evals, "sub", "run.json"); len(scripts) != 1 || scripts[0] != want {
		t.Fatalf("scripts %v, want [%s]", scripts, want)
	}
}

func TestEvalBadInputAndRoles(t *testing.T) {
	evals, _ := evalDir(t)
	e := newEnv(t, serve.Options{EvalDir: evals, Tokens: tokens, MaxBodyBytes: 4096}, scriptOf(call("wait", `{"text":"x"}`), scripted.Turn{Text: "done"}))
	viewer, runner, operator := bearer(tokens[0].Secret), bearer(tokens[1].Secret), bearer(tokens[2].Secret)
	for _, c := range []struct {
		name, body string
		status     int
		code, says string
	}{
		{"malformed JSON", `{"file": `, 400, "bad_request", "malformed JSON"},
		{"unknown field", `{"fiel": "cases.jsonl"}`, 400, "bad_request", "fiel"},
		{"nothing", `{}`, 400, "bad_request", "no cases"},
		{"both", `{"file": "cases.jsonl", "cases": [{"id": "a", "prompt": "x"}]}`, 400, "bad_request", "not both"},
		{"k too large", `{"file": "cases.jsonl", "k": 101}`, 400, "bad_request", `"k"`},
		{"k negative", `{"file": "cases.jsonl", "k": -1}`, 400, "bad_request", `"k"`},
		{"concurrency too large", `{"file": "cases.jsonl", "concurrency": 17}`, 400, "bad_request", "concurrency"},
		{"a bad inline case", `{"cases": [{"id": "a", "prompt": "x", "expect": {"nope": 1}}]}`, 400, "bad_request", "nope"},
		{"an inline case without id", `{"cases": [{"prompt": "x"}]}`, 400, "bad_request", `needs an "id"`},
		{"an inline case not an object", `{"cases": [3]}`, 400, "bad_request", "case"},
		{"too large", `{"cases": [{"id": "a", "prompt": "` + strings.Repeat("x", 5000) + `"}]}`, 413, "too_large", "4096"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := e.do("POST", "/v1/evals", c.body, runner...)
			msg, _ := r.body["error"].(map[string]any)
			if r.status != c.status || msg["code"] != c.code || !strings.Contains(msg["message"].(string), c.says) {
				t.Fatalf("%d %s, want %d %s saying %q", r.status, r.raw, c.status, c.code, c.says)
			}
		})
	}
	if r := e.must(http.StatusForbidden, "POST", "/v1/evals", `{"file": "cases.jsonl"}`, viewer...); !strings.Contains(r.raw, "runner") {
		t.Fatalf("403 should name the role needed: %s", r.raw)
	}
	e.must(http.StatusUnauthorized, "POST", "/v1/evals", `{"file": "cases.jsonl"}`)
	e.must(http.StatusUnauthorized, "GET", "/v1/evals", "")
	e.must(http.StatusNotFound, "GET", "/v1/evals/eval_000000000000000000000000", "", viewer...)
	e.must(http.StatusNotFound, "GET", "/v1/evals/nope/report.html", "", viewer...)

	// A running eval has no report yet: its runs wait on the gate.
	id := e.must(http.StatusAccepted, "POST", "/v1/evals", `{"cases": [{"id": "a", "prompt": "x", "expect": {"output_equals": "done"}}]}`, operator...).body["id"].(string)
	select {
	case <-e.gate.started:
	case <-time.After(time.Minute):
		t.Fatal("the eval's run never started")
	}
	for _, path := range []string{"/v1/evals/" + id, "/v1/evals/" + id + "/report.html"} {
		if r := e.must(http.StatusConflict, "GET", path, "", viewer...); !strings.Contains(r.raw, "no_report") || !strings.Contains(r.raw, "running") {
			t.Fatalf("%s: %s", path, r.raw)
		}
	}
	e.gate.open()
	if row := e.waitEval(id, "completed", viewer...); row["started_by"] != "olga" || row["passed"] != 1.0 {
		t.Fatalf("row: %v", row)
	}
}

// An eval going when its server stops is listed, once restarted, as
// interrupted, without a report.
func TestEvalInterruptedByAStop(t *testing.T) {
	dir := t.TempDir()
	model := scriptOf(call("wait", `{"text":"x"}`), scripted.Turn{Text: "done"})
	e := newEnv(t, serve.Options{Dir: dir}, model)
	id := e.must(http.StatusAccepted, "POST", "/v1/evals", `{"cases": [{"id": "a", "prompt": "x"}]}`).body["id"].(string)
	select {
	case <-e.gate.started:
	case <-time.After(time.Minute):
		t.Fatal("the eval's run never started")
	}
	if err := e.srv.Close(); err != nil {
		t.Fatal(err)
	}
	again := newEnv(t, serve.Options{Dir: dir}, model)
	again.waitEval(id, "interrupted")
	again.must(http.StatusConflict, "GET", "/v1/evals/"+id, "")

	// A server killed mid-eval never saved it so: its record still says
	// running, and the next server says interrupted.
	again.srv.Close()
	record := filepath.Join(dir, "evals", id, "eval.json")
	b, err := os.ReadFile(record)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(record, bytes.Replace(b, []byte(`"status":"interrupted"`), []byte(`"status":"running"`), 1), 0o600); err != nil {
		t.Fatal(err)
	}
	third := newEnv(t, serve.Options{Dir: dir}, model)
	// Loaded by New: no waiting.
	list := third.must(http.StatusOK, "GET", "/v1/evals", "")
	if evs := list.body["evals"].([]any); len(evs) != 1 || evs[0].(map[string]any)["status"] != "interrupted" {
		t.Fatalf("after a crash: %s", list.raw)
	}
}

func TestEvalDirMustBeADirectory(t *testing.T) {
	file := filepath.Join(t.TempDir(), "f")
	os.WriteFile(file, nil, 0o600)
	for _, d := range []string{file, filepath.Join(t.TempDir(), "missing")} {
		_, err := serve.New(serve.Options{Agent: newAgent(t, scriptOf(), newGate()), EvalDir: d})
		if !errors.Is(err, serve.ErrOptions) || !strings.Contains(err.Error(), "not a directory") {
			t.Fatalf("EvalDir %s: %v", d, err)
		}
	}
}
