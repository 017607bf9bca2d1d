package serve_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/loop"
	"github.com/autoagent-go/autoagent/providers/scripted"
	"github.com/autoagent-go/autoagent/serve"
	"github.com/autoagent-go/autoagent/tool"
)

// gate is a tool call that blocks until released: a run that is going.
type gate struct {
	started chan struct{}
	release chan struct{}
	once    sync.Once
}

func newGate() *gate { return &gate{started: make(chan struct{}, 100), release: make(chan struct{})} }

func (g *gate) open() { g.once.Do(func() { close(g.release) }) }

type env struct {
	t     *testing.T
	srv   *serve.Server
	http  *httptest.Server
	gate  *gate
	agent *loop.Agent
}

// scriptOf is a scripted model, one turn per assistant message already in
// the conversation (so concurrent runs each follow the script).
func scriptOf(turns ...scripted.Turn) llm.Provider {
	return scripted.NewWithOptions(scripted.Options{PerConversation: true, ForgetRequests: true}, turns...)
}

func call(name, args string) scripted.Turn {
	return scripted.Turn{ToolCalls: []llm.ToolCall{{Name: name, Arguments: json.RawMessage(args)}}}
}

// newAgent has the tools echo (needs approval), wait (blocks on the gate)
// and shout (runs freely).
func newAgent(t testing.TB, model llm.Provider, g *gate) *loop.Agent {
	t.Helper()
	type in struct {
		Text string `json:"text"`
	}
	reg := &tool.Registry{}
	echo, err := tool.New("echo", "echo", func(_ context.Context, a in) (string, error) { return "echo:" + a.Text, nil })
	if err != nil {
		t.Fatal(err)
	}
	wait, err := tool.New("wait", "wait", func(ctx context.Context, a in) (string, error) {
		g.started <- struct{}{}
		select {
		case <-g.release:
			return "waited", nil
		case <-ctx.Done():
			return "", ctx.Err()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	shout, err := tool.New("shout", "shout", func(_ context.Context, a in) (string, error) { return strings.ToUpper(a.Text), nil })
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range []tool.Tool{echo, wait, shout} {
		if err := reg.Add(x); err != nil {
			t.Fatal(err)
		}
	}
	pol := loop.PolicyFunc(func(_ context.Context, in *loop.PolicyInput) (loop.Decision, error) {
		if in.Call.Name == "echo" {
			return loop.Decision{Verdict: loop.VerdictApprove, Reason: "echo needs a human"}, nil
		}
		return loop.Decision{Verdict: loop.VerdictAllow}, nil
	})
	return &loop.Agent{Provider: model, Tools: reg, Checks: loop.Checks{Policy: pol}}
}

func newEnv(t *testing.T, opts serve.Options, model llm.Provider) *env {
	t.Helper()
	g := newGate()
	if opts.Agent == nil {
		opts.Agent = newAgent(t, model, g)
	}
	s, err := serve.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	hs := newServer(s)
	e := &env{t: t, srv: s, http: hs, gate: g, agent: opts.Agent}
	t.Cleanup(func() {
		g.open()
		hs.Close()
		s.Close()
	})
	return e
}

func newServer(h http.Handler) *httptest.Server { return httptest.NewServer(h) }

type reply struct {
	status int
	body   map[string]any
	raw    string
	header http.Header
}

func (e *env) do(method, path, body string, hdr ...string) reply {
	e.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, e.http.URL+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i] == "Host" {
			req.Host = hdr[i+1]
			continue
		}
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	r := reply{status: resp.StatusCode, raw: string(b), header: resp.Header}
	json.Unmarshal(b, &r.body)
	return r
}

func (e *env) must(want int, method, path, body string, hdr ...string) reply {
	e.t.Helper()
	r := e.do(method, path, body, hdr...)
	if r.status != want {
		e.t.Fatalf("%s %s: %d, want %d: %s", method, path, r.status, want, r.raw)
	}
	return r
}

// start starts a background run and returns its id.
func (e *env) start(prompt string, hdr ...string) string {
	e.t.Helper()
	r := e.must(http.StatusAccepted, "POST", "/v1/runs", fmt.Sprintf(`{"prompt": %q, "background": true}`, prompt), hdr...)
	id, _ := r.body["id"].(string)
	if id == "" || len(r.body) != 1 {
		e.t.Fatalf("start: want {\"id\"}, got %s", r.raw)
	}
	return id
}

// waitStatus polls the run until its status is want (bounded: a minute,
// for a loaded machine; the runs here take milliseconds).
func (e *env) waitStatus(id string, want serve.Status, hdr ...string) map[string]any {
	e.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		r := e.must(http.StatusOK, "GET", "/v1/runs/"+id, "", hdr...)
		if r.body["status"] == string(want) {
			return r.body
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("run %s: status %v, want %s: %s", id, r.body["status"], want, r.raw)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitStarted waits until the run is in its wait call (bounded, as
// waitStatus).
func (e *env) waitStarted(id string) {
	e.t.Helper()
	select {
	case <-e.gate.started:
	case <-time.After(time.Minute):
		e.t.Fatalf("run %s never called wait: %s", id, e.do("GET", "/v1/runs/"+id, "").raw)
	}
}

func pendingIDs(run map[string]any) []string {
	var ids []string
	ps, _ := run["pending"].([]any)
	for _, p := range ps {
		ids = append(ids, p.(map[string]any)["call_id"].(string))
	}
	return ids
}

func decisions(callID string, approve bool, reason string) string {
	return fmt.Sprintf(`{"decisions": [{"call_id": %q, "approve": %v, "reason": %q}]}`, callID, approve, reason)
}

func TestRunPausesForApprovalAndFinishesWhenApproved(t *testing.T) {
	e := newEnv(t, serve.Options{Dir: t.TempDir()}, scriptOf(call("echo", `{"text":"hi"}`), scripted.Turn{Text: "said hi"}))
	id := e.start("say hi")
	run := e.waitStatus(id, serve.StatusAwaitingApproval)
	ps := run["pending"].([]any)
	if len(ps) != 1 {
		t.Fatalf("pending: %v", run["pending"])
	}
	p := ps[0].(map[string]any)
	if p["name"] != "echo" || p["call_id"] == "" || fmt.Sprint(p["arguments"]) != "map[text:hi]" || p["reason"] != "echo needs a human" {
		t.Fatalf("pending call: %v", p)
	}
	if run["result"] != nil {
		t.Fatalf("a paused run has no result yet: %v", run["result"])
	}
	e.must(http.StatusAccepted, "POST", "/v1/runs/"+id+"/decisions", decisions(p["call_id"].(string), true, ""))
	run = e.waitStatus(id, serve.StatusCompleted)
	res := run["result"].(map[string]any)
	if res["output"] != "said hi" || res["stop_reason"] != "done" {
		t.Fatalf("result: %v", res)
	}
	if !strings.Contains(fmt.Sprint(res["messages"]), "echo:hi") {
		t.Fatalf("the approved call did not run: %v", res["messages"])
	}
	list := e.must(http.StatusOK, "GET", "/v1/runs", "")
	runs := list.body["runs"].([]any)
	if len(runs) != 1 || runs[0].(map[string]any)["id"] != id || runs[0].(map[string]any)["status"] != "completed" {
		t.Fatalf("list: %s", list.raw)
	}
}

func TestRejectedCallTellsTheModelWhy(t *testing.T) {
	e := newEnv(t, serve.Options{}, scriptOf(call("echo", `{"text":"hi"}`), scripted.Turn{Text: "ok, not then"}))
	id := e.start("say hi")
	run := e.waitStatus(id, serve.StatusAwaitingApproval)
	e.must(http.StatusAccepted, "POST", "/v1/runs/"+id+"/decisions", decisions(pendingIDs(run)[0], false, "not today"))
	run = e.waitStatus(id, serve.StatusCompleted)
	msgs := fmt.Sprint(run["result"].(map[string]any)["messages"])
	if !strings.Contains(msgs, "rejected by a human reviewer: not today") || strings.Contains(msgs, "echo:hi") {
		t.Fatalf("transcript: %s", msgs)
	}
}

func TestSynchronousRunAnswersTheRun(t *testing.T) {
	e := newEnv(t, serve.Options{}, scriptOf(scripted.Turn{Text: "hello"}))
	r := e.must(http.StatusOK, "POST", "/v1/runs", `{"prompt": "hi"}`)
	if r.body["status"] != "completed" || r.body["id"] == "" || r.body["result"].(map[string]any)["output"] != "hello" {
		t.Fatalf("run: %s", r.raw)
	}
}

func TestBadInput(t *testing.T) {
	e := newEnv(t, serve.Options{MaxBodyBytes: 1024}, scriptOf(call("echo", `{"text":"hi"}`), scripted.Turn{Text: "done"}, scripted.Turn{Text: "done"}))
	paused := e.start("x")
	run := e.waitStatus(paused, serve.StatusAwaitingApproval)
	done := e.must(http.StatusOK, "POST", "/v1/runs", `{"prompt": "y"}`)
	if done.body["status"] != "awaiting_approval" {
		t.Fatalf("second run: %s", done.raw)
	}
	callID := pendingIDs(run)[0]
	cases := []struct {
		name, method, path, body, ctype string
		status                          int
		code, says                      string
	}{
		{"malformed JSON", "POST", "/v1/runs", `{"prompt": `, "application/json", 400, "bad_request", "malformed JSON"},
		{"unknown field", "POST", "/v1/runs", `{"prompt": "x", "promtp": "y"}`, "application/json", 400, "bad_request", "promtp"},
		{"two objects", "POST", "/v1/runs", `{"prompt": "x"} {"prompt": "y"}`, "application/json", 400, "bad_request", "more follows"},
		{"not JSON content type", "POST", "/v1/runs", `{"prompt": "x"}`, "text/plain", 415, "unsupported_media_type", "application/json"},
		{"empty prompt", "POST", "/v1/runs", `{"prompt": "  "}`, "application/json", 400, "bad_request", "prompt"},
		{"too large", "POST", "/v1/runs", `{"prompt": "` + strings.Repeat("a", 2000) + `"}`, "application/json", 413, "too_large", "1024"},
		{"unknown run", "GET", "/v1/runs/run_000000000000000000000000", "", "", 404, "unknown_run", "no run"},
		{"unknown run events", "GET", "/v1/runs/nope/events", "", "", 404, "unknown_run", "no run"},
		{"decision for a call not pending", "POST", "/v1/runs/" + paused + "/decisions", decisions("call_9_9", true, ""), "application/json", 409, "not_pending", callID},
		{"decision without approve", "POST", "/v1/runs/" + paused + "/decisions", `{"decisions": [{"call_id": "` + callID + `"}]}`, "application/json", 400, "bad_request", "approve"},
		{"no decisions", "POST", "/v1/runs/" + paused + "/decisions", `{"decisions": []}`, "application/json", 400, "bad_request", "no decisions"},
		{"decision for an unknown run", "POST", "/v1/runs/run_x/decisions", decisions(callID, true, ""), "application/json", 404, "unknown_run", "no run"},
		{"bad Last-Event-ID", "GET", "/v1/runs/" + paused + "/events", "", "", 400, "bad_request", "Last-Event-ID"},
		{"unknown endpoint", "GET", "/v1/nothing", "", "", 404, "not_found", "openapi.json"},
		{"no session store", "POST", "/v1/runs", `{"prompt": "x", "session": {"session": "s"}}`, "application/json", 404, "no_sessions", "session store"},
		{"no plugins", "GET", "/v1/tools", "", "", 404, "no_plugins", "plugins directory"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req, _ := http.NewRequest(c.method, e.http.URL+c.path, strings.NewReader(c.body))
			if c.ctype != "" {
				req.Header.Set("Content-Type", c.ctype)
			}
			if c.name == "bad Last-Event-ID" {
				req.Header.Set("Last-Event-ID", "abc")
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			var out struct {
				Error struct{ Code, Message string }
			}
			json.Unmarshal(b, &out)
			if resp.StatusCode != c.status || out.Error.Code != c.code || !strings.Contains(out.Error.Message, c.says) {
				t.Fatalf("%d %s, want %d %s saying %q", resp.StatusCode, b, c.status, c.code, c.says)
			}
		})
	}
	// The run is still paused and decidable: bad input changed nothing.
	e.waitStatus(paused, serve.StatusAwaitingApproval)
}

func TestDecisionForAnEndedRunIsAConflict(t *testing.T) {
	e := newEnv(t, serve.Options{}, scriptOf(scripted.Turn{Text: "done"}))
	r := e.must(http.StatusOK, "POST", "/v1/runs", `{"prompt": "x"}`)
	id := r.body["id"].(string)
	r = e.must(http.StatusConflict, "POST", "/v1/runs/"+id+"/decisions", decisions("call_1_1", true, ""))
	if !strings.Contains(r.raw, "completed") {
		t.Fatalf("%s", r.raw)
	}
}

func TestCancel(t *testing.T) {
	e := newEnv(t, serve.Options{Dir: t.TempDir()}, scriptOf(call("wait", `{"text":"x"}`), scripted.Turn{Text: "done"}))
	going := e.start("wait")
	e.waitStarted(going)
	e.must(http.StatusAccepted, "POST", "/v1/runs/"+going+"/cancel", "")
	e.waitStatus(going, serve.StatusCancelled)
	e.must(http.StatusConflict, "POST", "/v1/runs/"+going+"/cancel", "")

	p := newEnv(t, serve.Options{}, scriptOf(call("echo", `{"text":"x"}`), scripted.Turn{Text: "done"}))
	paused := p.start("echo")
	p.waitStatus(paused, serve.StatusAwaitingApproval)
	p.must(http.StatusAccepted, "POST", "/v1/runs/"+paused+"/cancel", "")
	run := p.waitStatus(paused, serve.StatusCancelled)
	if len(pendingIDs(run)) != 0 {
		t.Fatalf("a cancelled run has nothing pending: %v", run["pending"])
	}
	p.must(http.StatusConflict, "POST", "/v1/runs/"+paused+"/decisions", decisions("call_1_1", true, ""))
}

var tokens = []serve.Token{
	{Name: "vera", Role: serve.RoleViewer, Secret: "viewer-secret-0123456789"},
	{Name: "rune", Role: serve.RoleRunner, Secret: "runner-secret-0123456789"},
	{Name: "olga", Role: serve.RoleOperator, Secret: "operator-secret-0123456789"},
}

func bearer(secret string) []string { return []string{"Authorization", "Bearer " + secret} }

func TestTokensAndRoles(t *testing.T) {
	dir := t.TempDir()
	e := newEnv(t, serve.Options{Tokens: tokens, Dir: dir}, scriptOf(call("echo", `{"text":"hi"}`), scripted.Turn{Text: "done"}))
	viewer, runner, operator := bearer(tokens[0].Secret), bearer(tokens[1].Secret), bearer(tokens[2].Secret)

	for _, hdr := range [][]string{
		nil,
		{"Authorization", "Basic " + tokens[2].Secret},
		{"Authorization", "Bearer wrong-secret-0123456789"},
		{"Authorization", "Bearer"},
		{"Cookie", "token=" + tokens[2].Secret},
	} {
		r := e.do("GET", "/v1/runs", "", hdr...)
		if r.status != http.StatusUnauthorized || !strings.HasPrefix(r.header.Get("WWW-Authenticate"), "Bearer") {
			t.Fatalf("%v: %d %s, want 401 with WWW-Authenticate", hdr, r.status, r.raw)
		}
	}
	if r := e.do("GET", "/v1/runs?access_token="+tokens[2].Secret, ""); r.status != http.StatusUnauthorized {
		t.Fatalf("a token in the query: %d, want 401 (bearer header only)", r.status)
	}
	e.must(http.StatusForbidden, "POST", "/v1/runs", `{"prompt": "x", "background": true}`, viewer...)
	id := e.start("x", runner...)
	run := e.waitStatus(id, serve.StatusAwaitingApproval, viewer...)
	if run["started_by"] != "rune" {
		t.Fatalf("started_by %v, want rune", run["started_by"])
	}
	callID := pendingIDs(run)[0]
	for _, who := range [][]string{viewer, runner} {
		r := e.must(http.StatusForbidden, "POST", "/v1/runs/"+id+"/decisions", decisions(callID, true, ""), who...)
		if !strings.Contains(r.raw, "operator") {
			t.Fatalf("403 should name the role needed: %s", r.raw)
		}
	}
	e.waitStatus(id, serve.StatusAwaitingApproval, viewer...)
	e.must(http.StatusAccepted, "POST", "/v1/runs/"+id+"/decisions", decisions(callID, true, "fine"), operator...)
	e.waitStatus(id, serve.StatusCompleted, viewer...)

	b, err := os.ReadFile(filepath.Join(dir, "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var entry map[string]any
	if err := json.Unmarshal(bytes.TrimSpace(b), &entry); err != nil {
		t.Fatalf("audit log %q: %v", b, err)
	}
	if entry["action"] != "decide" || entry["by"] != "olga" || entry["call_id"] != callID || entry["approve"] != true || entry["reason"] != "fine" || entry["run"] != id {
		t.Fatalf("audit entry: %v", entry)
	}
	// The OpenAPI document is public: it holds no secret.
	if r := e.must(http.StatusOK, "GET", "/openapi.json", ""); r.body["openapi"] != "3.1.0" {
		t.Fatalf("openapi: %.200s", r.raw)
	}
}

func TestWithoutTokensOnlyLoopbackIsServed(t *testing.T) {
	s, err := serve.New(serve.Options{Agent: newAgent(t, scriptOf(scripted.Turn{Text: "x"}), newGate())})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, c := range []struct {
		remote string
		want   int
	}{
		{"192.0.2.7:40000", http.StatusUnauthorized},
		{"[2001:db8::1]:40000", http.StatusUnauthorized},
		{"10.0.0.1:1", http.StatusUnauthorized},
		{"127.0.0.1:40000", http.StatusOK},
		{"[::1]:40000", http.StatusOK},
	} {
		req := httptest.NewRequest("GET", "http://127.0.0.1/v1/runs", nil)
		req.RemoteAddr = c.remote
		w := httptest.NewRecorder()
		s.ServeHTTP(w, req)
		if w.Code != c.want {
			t.Errorf("peer %s: %d, want %d: %s", c.remote, w.Code, c.want, w.Body)
		}
	}
}

func TestHostAndOriginAgainstRebinding(t *testing.T) {
	e := newEnv(t, serve.Options{AllowedHosts: []string{"agents.internal"}, AllowedOrigins: []string{"https://console.example"}}, scriptOf(scripted.Turn{Text: "x"}))
	port := e.http.URL[strings.LastIndex(e.http.URL, ":"):]
	for _, c := range []struct {
		hdr  []string
		want int
	}{
		{[]string{"Host", "evil.example" + port}, http.StatusForbidden},
		{[]string{"Host", "127.0.0.1.evil.example" + port}, http.StatusForbidden},
		{[]string{"Host", "localhost.evil.example"}, http.StatusForbidden},
		{[]string{"Host", "localhost" + port}, http.StatusOK},
		{[]string{"Host", "LOCALHOST" + port}, http.StatusOK},
		{[]string{"Host", "[::1]" + port}, http.StatusOK},
		{[]string{"Host", "agents.internal" + port}, http.StatusOK},
		{[]string{"Origin", "http://evil.example" + port}, http.StatusForbidden},
		{[]string{"Origin", "null"}, http.StatusForbidden},
		{[]string{"Origin", "http://localhost" + port}, http.StatusForbidden}, // not the Host the page used
		{[]string{"Origin", e.http.URL}, http.StatusOK},
		{[]string{"Origin", "https://console.example"}, http.StatusOK},
	} {
		r := e.do("GET", "/v1/runs", "", c.hdr...)
		if r.status != c.want {
			t.Errorf("%v: %d %s, want %d", c.hdr, r.status, r.raw, c.want)
		}
	}
	// A cross-origin POST is refused before it runs anything.
	r := e.do("POST", "/v1/runs", `{"prompt": "x", "background": true}`, "Origin", "http://evil.example")
	if r.status != http.StatusForbidden {
		t.Fatalf("cross-origin POST: %d", r.status)
	}
	if list := e.must(http.StatusOK, "GET", "/v1/runs", ""); len(list.body["runs"].([]any)) != 0 {
		t.Fatalf("a refused request started a run: %s", list.raw)
	}
}

func TestParseTokens(t *testing.T) {
	ts, err := serve.ParseTokens("operator:olga:operator-secret-0123456789, viewer:vera:viewer-secret-0123456789")
	if err != nil || len(ts) != 2 || ts[0].Role != serve.RoleOperator || ts[1].Name != "vera" {
		t.Fatalf("%v %v", ts, err)
	}
	for _, bad := range []string{
		"", "operator:olga", "admin:olga:operator-secret-0123456789", "operator:olga:short",
		"operator:ol ga:operator-secret-0123456789",
		"operator:a:same-secret-0123456789,viewer:b:same-secret-0123456789",
	} {
		if _, err := serve.ParseTokens(bad); err == nil {
			t.Errorf("%q: accepted", bad)
		}
	}
}

// sseEvent is one event as a client reads it.
type sseEvent struct {
	id, typ, data string
}

func readSSE(t *testing.T, url string, hdr ...string) []sseEvent {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("events: %d %s", resp.StatusCode, b)
	}
	var out []sseEvent
	var cur sseEvent
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.typ != "" {
				out = append(out, cur)
			}
			cur = sseEvent{}
		case strings.HasPrefix(line, "id: "):
			cur.id = line[4:]
		case strings.HasPrefix(line, "event: "):
			cur.typ = line[7:]
		case strings.HasPrefix(line, "data: "):
			cur.data = line[6:]
		}
	}
	return out
}

func TestEventsStreamAndResumeWithLastEventID(t *testing.T) {
	e := newEnv(t, serve.Options{Dir: t.TempDir()}, scriptOf(call("echo", `{"text":"hi"}`), scripted.Turn{Text: "said hi"}))
	id := e.start("say hi")
	run := e.waitStatus(id, serve.StatusAwaitingApproval)
	url := e.http.URL + "/v1/runs/" + id + "/events"
	// The stream stays open while the run is paused: decide while it is
	// being read, and it ends when the run does.
	done := make(chan []sseEvent)
	go func() { done <- readSSE(t, url) }()
	e.must(http.StatusAccepted, "POST", "/v1/runs/"+id+"/decisions", decisions(pendingIDs(run)[0], true, ""))
	all := <-done
	var types []string
	for i, ev := range all {
		types = append(types, ev.typ)
		if ev.id != fmt.Sprint(i+1) {
			t.Fatalf("event %d has id %s: ids are 1, 2, … with no gap: %v", i, ev.id, all)
		}
		var body map[string]any
		if err := json.Unmarshal([]byte(ev.data), &body); err != nil || body["type"] != ev.typ {
			t.Fatalf("event %d data %s", i, ev.data)
		}
	}
	want := "approval_request status decision status tool_start tool_end text status"
	if got := strings.Join(types, " "); got != want {
		t.Fatalf("events %q, want %q", got, want)
	}
	if last := all[len(all)-1].data; !strings.Contains(last, `"status":"completed"`) {
		t.Fatalf("last event %s", last)
	}
	// Resume after the 4th: the 5th on, the same events.
	rest := readSSE(t, url, "Last-Event-ID", "4")
	if len(rest) != len(all)-4 {
		t.Fatalf("resumed stream: %d events, want %d", len(rest), len(all)-4)
	}
	for i, ev := range rest {
		if ev != all[i+4] {
			t.Fatalf("resumed event %d: %v, want %v", i, ev, all[i+4])
		}
	}
	if tail := readSSE(t, url, "Last-Event-ID", all[len(all)-1].id); len(tail) != 0 {
		t.Fatalf("resuming after the last event: %v", tail)
	}
}

func TestEventsSurviveARestart(t *testing.T) {
	dir := t.TempDir()
	model := scriptOf(call("echo", `{"text":"hi"}`), scripted.Turn{Text: "said hi"})
	e := newEnv(t, serve.Options{Dir: dir}, model)
	id := e.start("say hi")
	e.waitStatus(id, serve.StatusAwaitingApproval)
	before := readSSEUntil(t, e.http.URL+"/v1/runs/"+id+"/events", 2)
	e.srv.Close()

	e2 := newEnv(t, serve.Options{Dir: dir}, model)
	run := e2.waitStatus(id, serve.StatusAwaitingApproval)
	e2.must(http.StatusAccepted, "POST", "/v1/runs/"+id+"/decisions", decisions(pendingIDs(run)[0], true, ""))
	e2.waitStatus(id, serve.StatusCompleted)
	after := readSSE(t, e2.http.URL+"/v1/runs/"+id+"/events")
	if len(after) < 3 || after[0] != before[0] || after[1] != before[1] || after[2].id != "3" {
		t.Fatalf("events after a restart: %v\nbefore: %v", after, before)
	}
}

// readSSEUntil reads n events and hangs up.
func readSSEUntil(t *testing.T, url string, n int) []sseEvent {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out []sseEvent
	var cur sseEvent
	sc := bufio.NewScanner(resp.Body)
	for len(out) < n && sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.typ != "" {
				out = append(out, cur)
			}
			cur = sseEvent{}
		case strings.HasPrefix(line, "id: "):
			cur.id = line[4:]
		case strings.HasPrefix(line, "event: "):
			cur.typ = line[7:]
		case strings.HasPrefix(line, "data: "):
			cur.data = line[6:]
		}
	}
	return out
}

// A server that died lists, once restarted, the runs that were going as
// interrupted, with their transcript, and the paused ones as decidable.
// The crash is a copy of the runs directories taken while their servers
// still run (what a restart after SIGKILL finds; cmd/autoagent's
// TestServeOutlivesSIGKILL kills a real process).
func TestRunsOutliveTheServer(t *testing.T) {
	dirGoing, dirPaused, crashed := t.TempDir(), t.TempDir(), t.TempDir()
	model := scriptOf(call("wait", `{"text":"long"}`), scripted.Turn{Text: "done"})
	first := newEnv(t, serve.Options{Dir: dirGoing}, model)
	going := first.start("wait for it")
	first.waitStarted(going)
	first.waitStatus(going, serve.StatusRunning)

	pausing := scriptOf(call("echo", `{"text":"hi"}`), scripted.Turn{Text: "said hi"})
	second := newEnv(t, serve.Options{Dir: dirPaused}, pausing)
	paused := second.start("say hi")
	second.waitStatus(paused, serve.StatusAwaitingApproval)
	copyRuns(t, dirGoing, crashed)
	copyRuns(t, dirPaused, crashed)

	restarted := newEnv(t, serve.Options{Dir: crashed}, pausing)
	run := restarted.waitStatus(going, serve.StatusInterrupted)
	msgs := fmt.Sprint(run["messages"])
	if !strings.Contains(msgs, "wait for it") || !strings.Contains(msgs, "wait") {
		t.Fatalf("an interrupted run keeps its transcript: %v", run["messages"])
	}
	run = restarted.waitStatus(paused, serve.StatusAwaitingApproval)
	restarted.must(http.StatusAccepted, "POST", "/v1/runs/"+paused+"/decisions", decisions(pendingIDs(run)[0], true, ""))
	run = restarted.waitStatus(paused, serve.StatusCompleted)
	if out := run["result"].(map[string]any)["output"]; out != "said hi" {
		t.Fatalf("output %v", out)
	}
	// An interrupted run cannot be cancelled.
	restarted.must(http.StatusConflict, "POST", "/v1/runs/"+going+"/cancel", "")
}

// copyRuns copies the run directories of from into to.
func copyRuns(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, path)
		if !strings.HasPrefix(rel, "run_") {
			return nil
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o700)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), b, 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Our attack: a second server on a runs directory in use is refused (it
// would mark the first one's runs interrupted).
func TestOneServerPerDirectory(t *testing.T) {
	dir := t.TempDir()
	e := newEnv(t, serve.Options{Dir: dir}, scriptOf(scripted.Turn{Text: "x"}))
	_, err := serve.New(serve.Options{Dir: dir, Agent: e.agent})
	if !errors.Is(err, serve.ErrOptions) || !strings.Contains(err.Error(), "in use") {
		t.Fatalf("a second server: %v", err)
	}
	e.srv.Close()
	s, err := serve.New(serve.Options{Dir: dir, Agent: e.agent})
	if err != nil {
		t.Fatalf("after the first closed: %v", err)
	}
	s.Close()
}

// Close interrupts the runs going: a restarted server lists them so.
func TestCloseLeavesRunsInterrupted(t *testing.T) {
	dir := t.TempDir()
	model := scriptOf(call("wait", `{"text":"x"}`), scripted.Turn{Text: "done"})
	e := newEnv(t, serve.Options{Dir: dir}, model)
	id := e.start("wait")
	e.waitStarted(id)
	if err := e.srv.Close(); err != nil {
		t.Fatal(err)
	}
	again := newEnv(t, serve.Options{Dir: dir}, model)
	again.waitStatus(id, serve.StatusInterrupted)
}

func toJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A restarted server passes over a record directory that was made and
// never saved, and one whose record is unreadable (saying so), and still
// lists the runs it can read; a file in the way of a record is an error.
func TestRestartPassesOverUnsavedAndUnreadableRecords(t *testing.T) {
	dir := t.TempDir()
	model := scriptOf(scripted.Turn{Text: "done"})
	e := newEnv(t, serve.Options{Dir: dir}, model)
	id := e.start("go")
	e.waitStatus(id, serve.StatusCompleted)
	if err := e.srv.Close(); err != nil {
		t.Fatal(err)
	}
	unsaved := "run_" + strings.Repeat("a", 24)
	corrupt := "run_" + strings.Repeat("b", 24)
	badEval := "eval_" + strings.Repeat("c", 24)
	for _, d := range []string{unsaved, corrupt, filepath.Join("evals", badEval)} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, corrupt, "run.json"), []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "evals", badEval, "eval.json"), []byte("[]"), 0o644); err != nil {
		t.Fatal(err)
	}
	var notes strings.Builder
	again := newEnv(t, serve.Options{Dir: dir, Notes: &notes}, model)
	list := again.must(http.StatusOK, "GET", "/v1/runs", "")
	if !strings.Contains(list.raw, id) || strings.Contains(list.raw, unsaved) || strings.Contains(list.raw, corrupt) {
		t.Errorf("the runs listed after a restart: %s; want %s alone", list.raw, id)
	}
	got := notes.String()
	if !strings.Contains(got, "run "+corrupt+": its record") || !strings.Contains(got, "eval "+badEval+": its record is unreadable") {
		t.Errorf("notes %q; want the unreadable run and eval named", got)
	}
	if strings.Contains(got, unsaved) {
		t.Errorf("notes %q name the directory that was never saved: it is passed over in silence", got)
	}
	again.srv.Close()

	// A record that cannot be read at all (a directory where the file
	// should be) stops the start with the run's name, rather than losing
	// the run from the list.
	if err := os.Mkdir(filepath.Join(dir, unsaved, "run.json"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := serve.New(serve.Options{Dir: dir, Agent: again.agent}); err == nil || !strings.Contains(err.Error(), "run "+unsaved) {
		t.Errorf("a run.json that is a directory: %v; want an error naming run %s", err, unsaved)
	}
}
