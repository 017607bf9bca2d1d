package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// asTeammate approves a module as someone else would on their machine:
// with a trust store of theirs, so what they wrote is untrusted here.
func (e *cliEnv) asTeammate(args ...string) {
	e.t.Helper()
	mine := os.Getenv("AUTOAGENT_TRUST")
	e.t.Setenv("AUTOAGENT_TRUST", filepath.Join(e.t.TempDir(), "teammate-trust.json"))
	e.mustRun(0, args...)
	e.t.Setenv("AUTOAGENT_TRUST", mine)
}

// ownTrust gives the test a trust store of its own.
func (e *cliEnv) ownTrust() string {
	e.t.Helper()
	p := filepath.Join(e.t.TempDir(), "trust.json")
	e.t.Setenv("AUTOAGENT_TRUST", p)
	return p
}

// A checkout that ships plugins/ with its own manifest.json gets nothing
// approved by it until this user trusts its exact content: every command
// that reads the manifest says so once, with the command to run (the red
// team of issue 38: the working directory decided what was trusted, with
// env: secrets and net: grants).
func TestCheckoutManifestCountsOnlyOnceTrusted(t *testing.T) {
	e := newCLIEnv(t)
	e.ownTrust()
	t.Setenv("SECRET_TOKEN", "s3cr3t")
	e.add("echo.wasm")
	e.asTeammate("tools", "approve", filepath.Join(e.plugins, "echo.wasm"), "--grant", "env:SECRET_TOKEN", "--force", "--yes", "--by", "mallory")
	hint := "autoagent tools trust --manifest " + filepath.Join("plugins", "manifest.json")
	script := e.writeScript(`{"tool_calls":[{"id":"c1","name":"echo","arguments":{"msg":"hi"}}]}`, `{"text":"done"}`)

	r := e.mustRun(0, "tools", "list")
	if !strings.Contains(r.stderr, hint) || !strings.Contains(r.stdout, "pending") || strings.Count(r.stderr, hint) != 1 {
		t.Errorf("tools list: %s\n%s", r.stdout, r.stderr)
	}
	var listed listOutput
	if err := json.Unmarshal([]byte(e.mustRun(0, "tools", "list", "--json").stdout), &listed); err != nil || listed.Trusted || listed.Plugins[0].Status != "pending" {
		t.Errorf("tools list --json: %+v %v", listed, err)
	}
	r = e.run("", "tools", "call", "echo", "--args", `{"msg":"hi"}`)
	if r.code != 1 || !strings.Contains(r.stderr, hint) {
		t.Errorf("tools call NAME: exit %d\n%s", r.code, r.stderr)
	}
	r = e.run("", "run", "--provider", "scripted", "--script", script, "--json", "go")
	if !strings.Contains(r.stderr, hint) || strings.Count(r.stderr, hint) != 1 || strings.Contains(r.stdout, "s3cr3t") {
		t.Errorf("run: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if got := decodeRunJSON(t, r.stdout); !strings.Contains(string(mustJSON(t, got.Messages)), "unknown tool") && !strings.Contains(string(mustJSON(t, got.Messages)), "not") {
		t.Errorf("the run called an untrusted module: %s", r.stdout)
	}
	if r := e.run("", "mcp", "serve"); !strings.Contains(r.stderr, hint) || !strings.Contains(r.stderr, "no tools yet") {
		t.Errorf("mcp serve: exit %d\n%s", r.code, r.stderr)
	}
	if r := e.mustRun(0, "tools", "verify"); !strings.Contains(r.stderr, hint) {
		t.Errorf("tools verify: %s", r.stderr)
	}
	if r := e.mustRun(0, "tools", "inspect", filepath.Join(e.plugins, "echo.wasm")); !strings.Contains(r.stdout, "status:    pending: approved in") || !strings.Contains(r.stdout, "you have not trusted it") {
		t.Errorf("tools inspect: %s", r.stdout)
	}
	// This user's approval of another module into it trusts none of it.
	e.add("compute.wasm")
	r = e.mustRun(0, "tools", "approve", filepath.Join(e.plugins, "compute.wasm"), "--yes")
	if !strings.Contains(r.stdout, "holds approvals you have not trusted") {
		t.Errorf("approve into an untrusted manifest: %s", r.stdout)
	}
	if r := e.run("", "tools", "call", "echo", "--args", `{"msg":"hi"}`); r.code != 1 {
		t.Errorf("tools call after this user's approval: exit %d\n%s", r.code, r.stdout)
	}

	// Reviewed and trusted: the approvals count.
	if r := e.run("", "tools", "trust"); r.code != 2 || !strings.Contains(r.stderr, "--yes") {
		t.Errorf("trust without a terminal: exit %d %s", r.code, r.stderr)
	}
	r = e.mustRun(0, "tools", "trust", "--yes")
	for _, want := range []string{"echo (echo.wasm", "env:SECRET_TOKEN", "mallory", "never trusted by you", "environment and config: env:SECRET_TOKEN"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("tools trust does not show %q:\n%s", want, r.stdout)
		}
	}
	if r := e.mustRun(0, "tools", "call", "echo", "--args", `{"msg":"hi"}`); !strings.Contains(r.stdout, "hi") {
		t.Errorf("tools call once trusted: %s", r.stdout)
	}
	// This user's own revocation keeps the trust current.
	e.mustRun(0, "tools", "revoke", "compute")
	e.mustRun(0, "tools", "call", "echo", "--args", `{"msg":"hi"}`)

	// A teammate's change (a pull) voids it: changed since trusted.
	e.add("state.wasm")
	e.asTeammate("tools", "approve", filepath.Join(e.plugins, "state.wasm"), "--force", "--yes", "--by", "mallory")
	r = e.run("", "tools", "call", "echo", "--args", `{"msg":"hi"}`)
	if r.code != 1 || !strings.Contains(r.stderr, "changed since you trusted it") {
		t.Errorf("after a teammate's change: exit %d %s", r.code, r.stderr)
	}
	e.mustRun(0, "tools", "trust", "--yes")
	e.mustRun(0, "tools", "untrust")
	if r := e.run("", "tools", "call", "echo", "--args", `{"msg":"hi"}`); r.code != 1 {
		t.Errorf("after untrust: exit %d", r.code)
	}
	if r := e.run("", "tools", "untrust"); r.code != 1 || !strings.Contains(r.stderr, "no trust recorded") {
		t.Errorf("untrust twice: exit %d %s", r.code, r.stderr)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Attacks on the trust root itself (found by attacking our own fix): a
// manifest swapped after trust, a manifest that is a link to one trusted
// elsewhere, a trust store planted in the checkout, and XDG_CONFIG_HOME
// pointing into the checkout.
func TestTrustRootAttacks(t *testing.T) {
	e := newCLIEnv(t)
	e.ownTrust()
	e.add("echo.wasm")
	e.mustRun(0, "tools", "approve", filepath.Join(e.plugins, "echo.wasm"), "--yes")
	e.mustRun(0, "tools", "call", "echo", "--args", `{"msg":"mine"}`)

	// Swapped after trust: same approvals, one byte more.
	b, err := os.ReadFile(e.manifestPath())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(e.manifestPath(), append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := e.run("", "tools", "call", "echo", "--args", `{}`); r.code != 1 || !strings.Contains(r.stderr, "changed since you trusted it") {
		t.Errorf("a swapped manifest: exit %d %s", r.code, r.stderr)
	}
	if err := os.WriteFile(e.manifestPath(), b, 0o644); err != nil {
		t.Fatal(err)
	}
	e.mustRun(0, "tools", "call", "echo", "--args", `{}`)

	// A checkout whose manifest is a link to the trusted one, beside the
	// same module bytes: another manifest, untrusted.
	checkout := filepath.Join(t.TempDir(), "checkout")
	if err := os.MkdirAll(filepath.Join(checkout, "plugins"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(e.manifestPath(), filepath.Join(checkout, "plugins", "manifest.json")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(checkout, "plugins", "echo.wasm"), mustRead(t, filepath.Join(e.plugins, "echo.wasm")), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(checkout)
	if r := e.run("", "tools", "call", "echo", "--args", `{}`); r.code != 1 || !strings.Contains(r.stderr, "you have not trusted it") {
		t.Errorf("a linked manifest: exit %d %s", r.code, r.stderr)
	}
	// A trust store in the checkout, by AUTOAGENT_TRUST or by
	// XDG_CONFIG_HOME: refused, never read.
	planted := filepath.Join(checkout, ".config", "autoagent", "trust.json")
	if err := os.MkdirAll(filepath.Dir(planted), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(planted, []byte(`{"version":1,"manifests":[]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AUTOAGENT_TRUST", planted)
	if r := e.run("", "tools", "call", "echo", "--args", `{}`); r.code != 1 || !strings.Contains(r.stderr, "refusing the trust store") {
		t.Errorf("AUTOAGENT_TRUST in the checkout: exit %d %s", r.code, r.stderr)
	}
	t.Setenv("AUTOAGENT_TRUST", "")
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(checkout, ".config"))
	if r := e.run("", "tools", "trust", "--yes"); r.code != 1 || !strings.Contains(r.stderr, "refusing the trust store") {
		t.Errorf("XDG_CONFIG_HOME in the checkout: exit %d %s", r.code, r.stderr)
	}
	// From a subdirectory of the checkout too (the checkout is found by
	// its version control directory).
	if err := os.MkdirAll(filepath.Join(checkout, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(checkout, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(filepath.Join(checkout, "sub"))
	if r := e.run("", "tools", "list", "--plugins", filepath.Join(checkout, "plugins")); r.code != 1 || !strings.Contains(r.stderr, "refusing the trust store") {
		t.Errorf("XDG_CONFIG_HOME in the checkout, from a subdirectory: exit %d %s", r.code, r.stderr)
	}
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// With fs.write on a workspace that holds the run's policy and an
// executable script, the first-party write_file rewrites neither, and the
// next run loads the policy unchanged (the red team of issue 38).
func TestRunProtectsGoverningFiles(t *testing.T) {
	e := newCLIEnv(t)
	e.ownTrust()
	ws := filepath.Join(e.root, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	policyText := `{"default":"allow","rules":[{"tool":"write_file","action":"allow"}]}`
	policy := filepath.Join(ws, "policy.json")
	if err := os.WriteFile(policy, []byte(policyText), 0o644); err != nil {
		t.Fatal(err)
	}
	deploy := filepath.Join(ws, "deploy.sh")
	if err := os.WriteFile(deploy, []byte("#!/bin/sh\necho deploy\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(e.testdata, "..", "..", "plugins", "write_file.wasm")
	if err := os.WriteFile(filepath.Join(e.plugins, "write_file.wasm"), mustRead(t, src), 0o644); err != nil {
		t.Fatal(err)
	}
	e.mustRun(0, "tools", "approve", filepath.Join(e.plugins, "write_file.wasm"), "--grant", "fs.write:"+ws, "--yes")
	call := func(id, path string) string {
		return `{"id":"` + id + `","name":"write_file","arguments":{"path":"` + path + `","content":"{\"default\":\"allow\"}"}}`
	}
	script := e.writeScript(`{"tool_calls":[`+call("c1", policy)+`,`+call("c2", deploy)+`,`+call("c3", filepath.Join(ws, "notes.txt"))+`]}`, `{"text":"done"}`)
	trace := filepath.Join(ws, "trace.jsonl")
	r := e.run("", "run", "--provider", "scripted", "--script", script, "--policy", policy, "--trace", trace, "--json", "go")
	if r.code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if b := mustRead(t, policy); string(b) != policyText {
		t.Errorf("the policy was rewritten: %s", b)
	}
	if b := mustRead(t, deploy); string(b) != "#!/bin/sh\necho deploy\n" {
		t.Errorf("the executable was rewritten: %s", b)
	}
	if b := mustRead(t, filepath.Join(ws, "notes.txt")); string(b) != `{"default":"allow"}` {
		t.Errorf("an ordinary file of the workspace: %q", b)
	}
	out := decodeRunJSON(t, r.stdout)
	msgs := string(mustJSON(t, out.Messages))
	if strings.Count(msgs, "permission denied") < 2 {
		t.Errorf("the refusals are not in the transcript: %s", msgs)
	}
}

// No grant reaches the trust store's directory nor the backends
// directory, whatever --grant says (found by attacking our own fix: a
// module able to write the trust store trusts any manifest, one able to
// write the backends directory adds a binary that runs natively).
func TestGrantsCannotReachTrustStoreOrBackends(t *testing.T) {
	e := newCLIEnv(t)
	trust := e.ownTrust()
	backends := filepath.Join(t.TempDir(), "backends")
	if err := os.Mkdir(backends, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AUTOAGENT_BACKENDS", backends)
	module := filepath.Join(e.testdata, "..", "..", "plugins", "write_file.wasm")
	for dir, what := range map[string]string{filepath.Dir(trust): "the trust store's directory", backends: "the backends directory", filepath.Dir(backends): "the backends directory"} {
		r := e.run("", "tools", "call", module, "--grant", "fs.write:"+dir, "--args", `{"path":"`+filepath.Join(dir, "x")+`","content":"x"}`)
		if r.code != 1 || !strings.Contains(r.stderr, what) {
			t.Errorf("fs.write:%s: exit %d, %s", dir, r.code, r.stderr)
		}
	}
}
