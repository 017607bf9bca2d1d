package serve_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autoagent-go/autoagent/host"
	"github.com/autoagent-go/autoagent/host/plugindir"
	"github.com/autoagent-go/autoagent/providers/scripted"
	"github.com/autoagent-go/autoagent/serve"
	"github.com/autoagent-go/autoagent/session/sqlitestore"
)

func pluginsEnv(t *testing.T) (*env, string) {
	t.Helper()
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "plugins")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join("..", "testdata", "wasm", "echo.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "echo.wasm"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	h, err := host.New(ctx, host.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close(ctx) })
	d, err := plugindir.Open(ctx, h, plugindir.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close(ctx) })
	return newEnv(t, serve.Options{Plugins: d, Tokens: tokens}, scriptOf(scripted.Turn{Text: "x"})), dir
}

func plugin(t *testing.T, list reply, file string) map[string]any {
	t.Helper()
	for _, p := range list.body["plugins"].([]any) {
		if m := p.(map[string]any); m["file"] == file {
			return m
		}
	}
	t.Fatalf("no %s in %s", file, list.raw)
	return nil
}

func TestToolsInspectApproveRevokeVerify(t *testing.T) {
	e, dir := pluginsEnv(t)
	viewer, runner, operator := bearer(tokens[0].Secret), bearer(tokens[1].Secret), bearer(tokens[2].Secret)

	if p := plugin(t, e.must(http.StatusOK, "GET", "/v1/tools", "", viewer...), "echo.wasm"); p["status"] != "pending" {
		t.Fatalf("before approval: %v", p)
	}
	in := e.must(http.StatusOK, "GET", "/v1/tools/echo.wasm", "", viewer...)
	sum, _ := in.body["sha256"].(string)
	if len(sum) != 64 || in.body["status"] != "pending" || !strings.Contains(in.raw, `"spin"`) {
		t.Fatalf("inspect: %.400s", in.raw)
	}
	for _, name := range []string{"..%2Fecho.wasm", "echo.txt", ".echo.wasm", "nope.wasm"} {
		if r := e.do("GET", "/v1/tools/"+name, "", viewer...); r.status != http.StatusBadRequest && r.status != http.StatusNotFound {
			t.Errorf("inspect %s: %d %s", name, r.status, r.raw)
		}
	}
	approve := `{"sha256": "` + sum + `", "limits": {"timeout_ms": 5000}, "note": "reviewed"}`
	e.must(http.StatusForbidden, "POST", "/v1/tools/echo.wasm/approve", approve, runner...)
	e.must(http.StatusForbidden, "POST", "/v1/tools/echo.wasm/approve", approve, viewer...)
	r := e.must(http.StatusUnprocessableEntity, "POST", "/v1/tools/echo.wasm/approve", `{"grants": ["net:example.com"]}`, operator...)
	if !strings.Contains(r.raw, "net:example.com") || !strings.Contains(r.raw, "requests nothing") {
		t.Fatalf("more than requested: %s", r.raw)
	}
	e.must(http.StatusConflict, "POST", "/v1/tools/echo.wasm/approve", `{"sha256": "`+strings.Repeat("0", 64)+`"}`, operator...)
	e.must(http.StatusBadRequest, "POST", "/v1/tools/echo.wasm/approve", `{"grants": ["fs.read:relative"], "force": true}`, operator...)
	e.must(http.StatusBadRequest, "POST", "/v1/tools/echo.wasm/approve", `{"grants": ["bogus"]}`, operator...)
	r = e.must(http.StatusOK, "POST", "/v1/tools/echo.wasm/approve", approve, operator...)
	if !strings.Contains(r.raw, `"approved_by":"olga"`) {
		t.Fatalf("approve: %s", r.raw)
	}
	p := plugin(t, e.must(http.StatusOK, "GET", "/v1/tools", "", viewer...), "echo.wasm")
	if p["status"] != "approved" || p["approved_by"] != "olga" || p["note"] != "reviewed" {
		t.Fatalf("after approval: %v", p)
	}
	if v := e.must(http.StatusOK, "GET", "/v1/tools/verify", "", viewer...); v.body["ok"] != true {
		t.Fatalf("verify: %s", v.raw)
	}
	e.must(http.StatusForbidden, "POST", "/v1/tools/echo/revoke", `{}`, runner...)
	e.must(http.StatusNotFound, "POST", "/v1/tools/nothing/revoke", `{}`, operator...)
	e.must(http.StatusOK, "POST", "/v1/tools/echo/revoke", `{"note": "done with it"}`, operator...)
	if p := plugin(t, e.must(http.StatusOK, "GET", "/v1/tools", "", viewer...), "echo.wasm"); p["status"] != "pending" {
		t.Fatalf("after revoke: %v", p)
	}
	log, err := os.ReadFile(filepath.Join(dir, "manifest.log.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(log)), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"olga"`) || !strings.Contains(lines[1], `"olga"`) || !strings.Contains(lines[1], "revoke") {
		t.Fatalf("the manifest's audit log: %s", log)
	}
}

func TestSessionsListShowContinue(t *testing.T) {
	st, err := sqlitestore.Open(filepath.Join(t.TempDir(), "sessions.db"), sqlitestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	e := newEnv(t, serve.Options{Sessions: st}, scriptOf(scripted.Turn{Text: "first answer"}, scripted.Turn{Text: "second answer"}))
	r := e.must(http.StatusOK, "POST", "/v1/sessions/ada/support/runs", `{"prompt": "hello"}`)
	if r.body["result"].(map[string]any)["output"] != "first answer" {
		t.Fatalf("first turn: %s", r.raw)
	}
	// The second turn has the first as history (the script's second turn).
	r = e.must(http.StatusOK, "POST", "/v1/runs", `{"prompt": "again", "session": {"user": "ada", "session": "support"}}`)
	if r.body["result"].(map[string]any)["output"] != "second answer" {
		t.Fatalf("second turn: %s", r.raw)
	}
	list := e.must(http.StatusOK, "GET", "/v1/sessions?all=true", "")
	if ss := list.body["sessions"].([]any); len(ss) != 1 || ss[0].(map[string]any)["session"] != "support" {
		t.Fatalf("list: %s", list.raw)
	}
	show := e.must(http.StatusOK, "GET", "/v1/sessions/ada/support", "")
	if entries := show.body["entries"].([]any); len(entries) != 4 || !strings.Contains(show.raw, "second answer") {
		t.Fatalf("show: %s", show.raw)
	}
	e.must(http.StatusNotFound, "GET", "/v1/sessions/ada/other", "")
	e.must(http.StatusBadRequest, "POST", "/v1/sessions/ada/support/runs", `{"prompt": "x", "session": {"user": "bob", "session": "support"}}`)
}
