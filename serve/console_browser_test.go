package serve_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/autoagent-go/autoagent/host"
	"github.com/autoagent-go/autoagent/host/plugindir"
	"github.com/autoagent-go/autoagent/internal/cdp"
	"github.com/autoagent-go/autoagent/loop"
	"github.com/autoagent-go/autoagent/providers/scripted"
	"github.com/autoagent-go/autoagent/serve"
	"github.com/autoagent-go/autoagent/session/sqlitestore"
	"github.com/autoagent-go/autoagent/tool"
)

// browserTimeout bounds one browser test: generous, for a cold browser
// on a loaded two-core machine; the tests wait on the DOM, never on time.
const browserTimeout = 3 * time.Minute

// console opens the console of e in headless Chromium, entering token
// (none: "") in its header. It skips the test when no Chromium is on PATH:
// `make deps` installs it (.ci/install.d/eval.sh), so CI runs these.
func console(t *testing.T, e *env, token string) (context.Context, *cdp.Page) {
	t.Helper()
	var bin string
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			bin = p
			break
		}
	}
	if bin == "" {
		t.Skip("no chromium on PATH: `make deps` installs Debian's chromium (.ci/install.d/eval.sh), in which these tests drive the console")
	}
	ctx, cancel := context.WithTimeout(context.Background(), browserTimeout)
	t.Cleanup(cancel)
	b, err := cdp.Start(ctx, bin, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	p, err := b.NewPage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Navigate(ctx, e.http.URL+"/"); err != nil {
		t.Fatal(err)
	}
	if token != "" {
		// As a person would: focus the field, type, press Enter.
		must(t, p.Eval(ctx, `document.getElementById("token").focus()`, nil))
		must(t, p.Type(ctx, token))
		must(t, p.Key(ctx, "Enter"))
		waitDOM(t, ctx, p, `document.getElementById("token-state").textContent === "token set for this tab"`)
	}
	t.Cleanup(func() {
		// The page ran without an exception or a policy violation. A
		// refused request (before the token was entered) is the network's
		// log, not the page's fault.
		for _, e := range p.Errors() {
			if !strings.HasPrefix(e, "log (network)") {
				t.Errorf("the console reported: %s", e)
			}
		}
	})
	return ctx, p
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// waitDOM waits until cond holds, failing at once when the page shows
// an error instead (role=alert: a refused or failed API call).
func waitDOM(t *testing.T, ctx context.Context, p *cdp.Page, cond string) {
	t.Helper()
	alert := `document.querySelector('main [role=alert]')`
	if err := p.WaitFor(ctx, "("+cond+") || "+alert+" !== null"); err != nil {
		t.Fatal(err)
	}
	var shown string
	must(t, p.Eval(ctx, `(`+alert+` || {}).textContent || ""`, &shown))
	if shown != "" {
		t.Fatalf("waiting for %s, the console shows an error: %s", cond, shown)
	}
}

func text(t *testing.T, ctx context.Context, p *cdp.Page, expr string) string {
	t.Helper()
	var s string
	must(t, p.Eval(ctx, expr, &s))
	return s
}

// screenshot keeps the page as the test's artefact (go test -artifacts
// keeps them; `make screenshots` copies two into docs/img).
func screenshot(t *testing.T, ctx context.Context, p *cdp.Page, name string) {
	t.Helper()
	path := filepath.Join(t.ArtifactDir(), name)
	must(t, p.Screenshot(ctx, path))
	t.Logf("screenshot: %s", path)
}

// checkA11y fails the test on what a keyboard or screen reader user
// would meet: a control without a label, a button without a name, an id
// used twice (a label or aria reference then names the wrong element).
func checkA11y(t *testing.T, ctx context.Context, p *cdp.Page) {
	t.Helper()
	var bad []string
	must(t, p.Eval(ctx, `(() => {
		const bad = [], ids = new Set();
		for (const el of document.querySelectorAll("[id]")) {
			if (ids.has(el.id)) bad.push("the id " + el.id + " is used twice");
			ids.add(el.id);
		}
		for (const el of document.querySelectorAll("input, select, textarea")) {
			if (!(el.labels && el.labels.length) && !el.getAttribute("aria-label") && !el.getAttribute("aria-labelledby")) bad.push("a " + el.tagName + " named " + el.name + " has no label");
		}
		for (const el of document.querySelectorAll("button")) {
			if (!el.textContent.trim() && !el.getAttribute("aria-label")) bad.push("a button has no name");
		}
		return bad;
	})()`, &bad))
	if len(bad) > 0 {
		t.Fatalf("the page is not usable with a keyboard or screen reader: %q", bad)
	}
}

func js(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// An operator approves a paused call in the approvals inbox, with the
// keyboard, and sees the run finish on its timeline.
func TestConsoleInboxApprovesAndRunFinishes(t *testing.T) {
	dir := t.TempDir()
	e := newEnv(t, serve.Options{Tokens: tokens, Dir: dir}, scriptOf(
		call("shout", `{"text":"checking the release notes"}`),
		call("echo", `{"text":"ship release 1.4 to production"}`),
		scripted.Turn{Text: "Shipped: release 1.4 is in production."}))
	runner := bearer(tokens[1].Secret)
	// The prompt carries markup: the console must show it as text.
	id := e.start(`Ship release 1.4 once a person agrees. <img src=x onerror="document.title='pwned'">`, runner...)
	run := e.waitStatus(id, serve.StatusAwaitingApproval, runner...)
	callID := pendingIDs(run)[0]
	// Another run paused on a call of the same id: the inbox keeps both.
	other := e.start("Ship release 1.5 too.", runner...)
	e.waitStatus(other, serve.StatusAwaitingApproval, runner...)

	ctx, p := console(t, e, tokens[2].Secret)
	must(t, p.Eval(ctx, `location.hash = "#/approvals"`, nil))
	card := fmt.Sprintf(`document.querySelector('#inbox [data-key=%s]')`, js(id+"/"+callID))
	waitDOM(t, ctx, p, card+` !== null`)
	got := text(t, ctx, p, card+`.innerText`)
	for _, want := range []string{"echo", "echo needs a human", "ship release 1.4 to production", id, "policy"} {
		if !strings.Contains(got, want) {
			t.Fatalf("the inbox card lacks %q:\n%s", want, got)
		}
	}
	if n := text(t, ctx, p, `String(`+card+`.querySelectorAll("img").length)`); n != "0" || !strings.Contains(got, `<img src=x onerror=`) {
		t.Fatalf("the prompt's markup became elements (%s img) or vanished:\n%s", n, got)
	}
	waitDOM(t, ctx, p, `document.getElementById("approvals-count").textContent === "2" && document.querySelectorAll('#inbox article').length === 2`)
	checkA11y(t, ctx, p)
	must(t, p.Eval(ctx, `document.activeElement.blur()`, nil))
	screenshot(t, ctx, p, "approvals-inbox.png")

	// Keyboard: the reason field, then Tab to Approve and Enter.
	must(t, p.Eval(ctx, card+`.querySelector('input[name=reason]').focus()`, nil))
	must(t, p.Type(ctx, "release notes checked"))
	must(t, p.Key(ctx, "Tab"))
	if got := text(t, ctx, p, `document.activeElement.textContent`); got != "Approve" {
		t.Fatalf("Tab from the reason reached %q, not Approve", got)
	}
	must(t, p.Key(ctx, "Enter"))
	waitDOM(t, ctx, p, card+`.dataset.decided === "approved"`)

	must(t, p.Eval(ctx, `location.hash = "#/runs/`+id+`"`, nil))
	waitDOM(t, ctx, p, `document.querySelector('#run-head [data-status=completed]') !== null`)
	waitDOM(t, ctx, p, `(document.getElementById("output") || {}).textContent === "Shipped: release 1.4 is in production."`)
	// The record may say completed before the stream drew the last event.
	waitDOM(t, ctx, p, `document.getElementById("timeline").innerText.includes("Status: completed")`)
	tl := text(t, ctx, p, `document.getElementById("timeline").innerText`)
	for _, want := range []string{"Tool call shout", "CHECKING THE RELEASE NOTES", "Paused: 1 call(s) need a decision",
		"Approved " + callID + " by olga", "release notes checked", "echo:ship release 1.4 to production", "Status: completed"} {
		if !strings.Contains(tl, want) {
			t.Fatalf("the timeline lacks %q:\n%s", want, tl)
		}
	}
	checkA11y(t, ctx, p)
	screenshot(t, ctx, p, "run-timeline.png")

	// The decision is on record with the operator's name and reason.
	b, err := os.ReadFile(filepath.Join(dir, "audit.jsonl"))
	must(t, err)
	if !strings.Contains(string(b), `"by":"olga"`) || !strings.Contains(string(b), `"reason":"release notes checked"`) {
		t.Fatalf("audit log: %s", b)
	}
}

// An operator reviews a dropped-in module on the tools page, approves it
// with what it requests, and a run started from the console calls it.
func TestConsoleApprovesModuleThenRunsIt(t *testing.T) {
	ctx := context.Background()
	pdir := filepath.Join(t.TempDir(), "plugins")
	must(t, os.Mkdir(pdir, 0o755))
	b, err := os.ReadFile(filepath.Join("..", "testdata", "wasm", "echo.wasm"))
	must(t, err)
	must(t, os.WriteFile(filepath.Join(pdir, "echo.wasm"), b, 0o644))
	h, err := host.New(ctx, host.Options{})
	must(t, err)
	t.Cleanup(func() { h.Close(ctx) })
	d, err := plugindir.Open(ctx, h, plugindir.Options{Dir: pdir})
	must(t, err)
	t.Cleanup(func() { d.Close(ctx) })
	reg := &tool.Registry{}
	must(t, d.Publish(reg))
	model := scriptOf(call("echo", `{"said":"hello from the sandbox"}`), scripted.Turn{Text: "The module answered."})
	e := newEnv(t, serve.Options{Plugins: d, Tokens: tokens, Agent: &loop.Agent{Provider: model, Tools: reg}}, nil)

	cx, p := console(t, e, tokens[2].Secret)
	must(t, p.Eval(cx, `location.hash = "#/tools"`, nil))
	waitDOM(t, cx, p, `document.querySelector('#tools tr[data-file="echo.wasm"][data-status=pending]') !== null`)
	must(t, p.Eval(cx, `document.querySelector('#tools tr[data-file="echo.wasm"] button.review').focus()`, nil))
	must(t, p.Key(cx, "Enter"))
	waitDOM(t, cx, p, `document.getElementById("approve-form") !== null`)
	sum := e.must(http.StatusOK, "GET", "/v1/tools/echo.wasm", "", bearer(tokens[0].Secret)...).body["sha256"].(string)
	if got := text(t, cx, p, `document.getElementById("tool-sha256").textContent`); got != sum {
		t.Fatalf("the review shows sha256 %q, the file has %s", got, sum)
	}
	checkA11y(t, cx, p)
	detail := text(t, cx, p, `document.getElementById("tool-detail").innerText`)
	for _, want := range []string{"requests no capabilities", "spin", "Runs n rounds", "Input schema"} {
		if !strings.Contains(detail, want) {
			t.Fatalf("the review lacks %q:\n%s", want, detail)
		}
	}
	// Bytes swapped after the review are not approved: the approval
	// names the sha256 reviewed.
	other, err := os.ReadFile(filepath.Join("..", "testdata", "wasm", "compute.wasm"))
	must(t, err)
	must(t, os.WriteFile(filepath.Join(pdir, "echo.wasm"), other, 0o644))
	must(t, p.Eval(cx, `document.querySelector('#approve-form button[type=submit]').click()`, nil))
	if err := p.WaitFor(cx, `document.querySelector('#approve-form [role=status]').textContent !== ""`); err != nil {
		t.Fatal(err)
	}
	if got := text(t, cx, p, `(document.querySelector('#approve-form [role=alert]') || {}).textContent || "no error shown"`); !strings.Contains(got, "inspect it again") {
		t.Fatalf("approving swapped bytes: %q", got)
	}
	must(t, os.WriteFile(filepath.Join(pdir, "echo.wasm"), b, 0o644))

	must(t, p.Eval(cx, `document.querySelector('#approve-form input[name=note]').focus()`, nil))
	must(t, p.Type(cx, "reviewed in the console"))
	must(t, p.Key(cx, "Enter")) // submits the form
	waitDOM(t, cx, p, `document.querySelector('#tools tr[data-file="echo.wasm"][data-status=approved]') !== null`)
	row := plugin(t, e.must(http.StatusOK, "GET", "/v1/tools", "", bearer(tokens[0].Secret)...), "echo.wasm")
	if row["approved_by"] != "olga" || row["note"] != "reviewed in the console" || len(row["grants"].([]any)) != 0 {
		t.Fatalf("approval: %v", row)
	}

	must(t, p.Eval(cx, `location.hash = "#/runs"`, nil))
	waitDOM(t, cx, p, `document.querySelector('#start-form textarea') !== null`)
	must(t, p.Eval(cx, `document.querySelector('#start-form textarea').focus()`, nil))
	must(t, p.Type(cx, "Call the module."))
	must(t, p.Eval(cx, `document.querySelector('#start-form button[type=submit]').click()`, nil))
	waitDOM(t, cx, p, `location.hash.startsWith("#/runs/run_")`)
	waitDOM(t, cx, p, `document.querySelector('#run-head [data-status=completed]') !== null`)
	waitDOM(t, cx, p, `document.getElementById("timeline").innerText.includes("Status: completed")`)
	tl := text(t, cx, p, `document.getElementById("timeline").innerText`)
	if !strings.Contains(tl, `hello from the sandbox`) || !strings.Contains(tl, "The module answered.") {
		t.Fatalf("the timeline lacks the module's answer:\n%s", tl)
	}
	// The trace shows what the stream does not: each model call and the
	// tool call's time (a sandbox call's module, time and memory when the
	// run's trace carries them).
	waitDOM(t, cx, p, `document.querySelectorAll('#trace tr[data-type=llm_response]').length === 2`)
	if got := text(t, cx, p, `document.querySelector('#trace tr[data-type=tool_call_end]').innerText`); !strings.Contains(got, "echo · ok · ") || !strings.Contains(got, " ms") {
		t.Fatalf("the trace's tool call row: %q", got)
	}
	if got := text(t, cx, p, `document.querySelector('#trace tr[data-type=llm_response]').innerText`); !strings.Contains(got, "model call") || !strings.Contains(got, "step 1") || !strings.Contains(got, "tool_calls") {
		t.Fatalf("the trace's model call row: %q", got)
	}
	screenshot(t, cx, p, "module-run.png")
}

// A run's timeline grows while the run goes on: the stream delivers each
// event as it happens, resumes after the server ends it (Last-Event-ID)
// without losing or repeating one, and the page shows the end.
func TestConsoleStreamsTimeline(t *testing.T) {
	e := newEnv(t, serve.Options{MaxStreamTime: 300 * time.Millisecond}, scriptOf(
		call("shout", `{"text":"first"}`),
		call("wait", `{"text":"for the gate"}`),
		scripted.Turn{Text: "All done after the gate."}))
	id := e.start("Shout, then wait.")
	e.waitStarted(id)

	ctx, p := console(t, e, "")
	must(t, p.Eval(ctx, `location.hash = "#/runs/`+id+`"`, nil))
	waitCall := `document.querySelector('#timeline li[data-type=tool_start] .tool-name') && Array.from(document.querySelectorAll('#timeline li[data-type=tool_start]')).find(li => li.querySelector('.tool-name').textContent === "wait")`
	waitDOM(t, ctx, p, waitCall)
	if got := text(t, ctx, p, `document.querySelector('#run-head .status').dataset.status`); got != "running" {
		t.Fatalf("status %q while the run waits", got)
	}
	if text(t, ctx, p, `String((`+waitCall+`).dataset.ended || "")`) != "" {
		t.Fatal("the wait call shows a result before it has one")
	}
	// The stream is cut every 300 ms: the page resumes where it was.
	waitDOM(t, ctx, p, `Number(document.getElementById("timeline").dataset.connections) >= 3 || document.getElementById("stream-state").textContent.includes("ended")`)
	if st := text(t, ctx, p, `document.getElementById("stream-state").textContent`); strings.Contains(st, "ended") {
		t.Fatalf("the page stopped streaming a run that goes on (%s)", st)
	}
	var before, after int
	must(t, p.Eval(ctx, `document.querySelectorAll('#timeline > li').length`, &before))
	screenshot(t, ctx, p, "run-streaming.png")

	e.gate.open()
	waitDOM(t, ctx, p, `document.querySelector('#run-head [data-status=completed]') !== null`)
	waitDOM(t, ctx, p, `document.getElementById("timeline").innerText.includes("All done after the gate.") && document.getElementById("timeline").innerText.includes("Status: completed")`)
	must(t, p.Eval(ctx, `document.querySelectorAll('#timeline > li').length`, &after))
	if after <= before {
		t.Fatalf("the timeline did not grow: %d items, then %d", before, after)
	}
	if text(t, ctx, p, `String((`+waitCall+`).dataset.ended || "")`) != "true" {
		t.Fatal("the wait call shows no result")
	}
	// Each resume asked for the events after the last one received
	// (Last-Event-ID): none came twice.
	if d := text(t, ctx, p, `document.getElementById("timeline").dataset.duplicates || "0"`); d != "0" {
		t.Fatalf("%s events were received twice: the resume did not say where it was", d)
	}
	// Every event once, in order, none missing: the seqs drawn are 1..n.
	var seqs []int
	must(t, p.Eval(ctx, `Array.from(document.querySelectorAll('#timeline [data-seq]')).map(el => Number(el.dataset.seq)).filter(n => n > 0)`, &seqs))
	for i, s := range seqs {
		if s != i+1 {
			t.Fatalf("event seqs drawn: %v (want 1..n, each once)", seqs)
		}
	}
	r := e.do("GET", "/v1/runs/"+id+"/events", "")
	n := strings.Count(r.raw, "\nevent: ")
	if len(seqs) != n {
		t.Fatalf("%d events drawn, the stream has %d", len(seqs), n)
	}
}

// An eval started from the console runs a case file of the eval
// directory; its report shows the pass rates, the cases and why one
// failed.
func TestConsoleEvalReport(t *testing.T) {
	evals, _ := evalDir(t)
	e := newEnv(t, serve.Options{EvalDir: evals}, scriptOf(scripted.Turn{Text: "done"}))
	ctx, p := console(t, e, "")
	must(t, p.Eval(ctx, `location.hash = "#/evals"`, nil))
	waitDOM(t, ctx, p, `document.querySelector('#eval-form input[name=file]') !== null`)
	must(t, p.Eval(ctx, `document.querySelector('#eval-form input[name=file]').focus()`, nil))
	must(t, p.Type(ctx, "cases.jsonl"))
	must(t, p.Key(ctx, "Tab"))
	must(t, p.Eval(ctx, `document.activeElement.select()`, nil))
	must(t, p.Type(ctx, "2"))
	must(t, p.Key(ctx, "Enter"))
	waitDOM(t, ctx, p, `document.querySelector('#evals tr [data-status=completed]') !== null`)
	row := text(t, ctx, p, `document.querySelector('#evals tr').innerText`)
	for _, want := range []string{"cases.jsonl", "1 of 2", "50%"} {
		if !strings.Contains(row, want) {
			t.Fatalf("the eval's row lacks %q: %s", want, row)
		}
	}
	must(t, p.Eval(ctx, `document.querySelector('#evals tr a').click()`, nil))
	waitDOM(t, ctx, p, `document.querySelector('#eval-cases tr[data-case=says-other]') !== null`)
	for c, want := range map[string]string{"says-done": "2 of 2", "says-other": "0 of 2"} {
		if got := text(t, ctx, p, `document.querySelector('#eval-cases tr[data-case=`+c+`]').innerText`); !strings.Contains(got, want) {
			t.Fatalf("case %s: %q, want %q", c, got, want)
		}
	}
	if got := text(t, ctx, p, `document.getElementById("main").innerText`); !strings.Contains(got, "Failures of says-other") || !strings.Contains(got, "something else") {
		t.Fatalf("the report does not say why says-other failed:\n%s", got)
	}
	checkA11y(t, ctx, p)
	screenshot(t, ctx, p, "eval-report.png")
}

// The sessions page lists a session, shows its messages, and continues
// it: the new run's model sees the earlier turn.
func TestConsoleContinuesASession(t *testing.T) {
	st, err := sqlitestore.Open(filepath.Join(t.TempDir(), "sessions.db"), sqlitestore.Options{})
	must(t, err)
	t.Cleanup(func() { st.Close() })
	e := newEnv(t, serve.Options{Sessions: st}, scriptOf(scripted.Turn{Text: "Your order 4417 ships Monday."}, scripted.Turn{Text: "It was 4417."}))
	e.must(http.StatusOK, "POST", "/v1/sessions/ada/support/runs", `{"prompt": "Where is order 4417?"}`)

	ctx, p := console(t, e, "")
	must(t, p.Eval(ctx, `location.hash = "#/sessions"`, nil))
	waitDOM(t, ctx, p, `document.querySelector('#sessions a') !== null`)
	if got := text(t, ctx, p, `document.querySelector('#sessions tr').innerText`); !strings.Contains(got, "ada") || !strings.Contains(got, "support") {
		t.Fatalf("the sessions row: %q", got)
	}
	must(t, p.Eval(ctx, `document.querySelector('#sessions a').click()`, nil))
	waitDOM(t, ctx, p, `document.querySelector('.transcript') !== null`)
	if got := text(t, ctx, p, `document.querySelector('.transcript').innerText`); !strings.Contains(got, "Where is order 4417?") || !strings.Contains(got, "ships Monday") {
		t.Fatalf("the session's messages:\n%s", got)
	}
	must(t, p.Eval(ctx, `document.querySelector('main form textarea').focus()`, nil))
	must(t, p.Type(ctx, "What was my order number?"))
	must(t, p.Eval(ctx, `document.querySelector('main form button[type=submit]').click()`, nil))
	waitDOM(t, ctx, p, `location.hash.startsWith("#/runs/run_")`)
	waitDOM(t, ctx, p, `(document.getElementById("output") || {}).textContent === "It was 4417."`)

	// A link with a "." or ".." element names no page: it cannot steer
	// the page's relative API calls to another endpoint.
	for _, h := range []string{"#/sessions/./..", "#/runs/..", "#/sessions/ada/.."} {
		must(t, p.Eval(ctx, `location.hash = `+js(h), nil))
		waitDOM(t, ctx, p, `document.querySelector('main h1') && document.querySelector('main h1').textContent === "Not found"`)
	}
}
