package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/autoagent-go/autoagent/manifest"
)

// A hyper-mcp runtime config becomes proposals: files, grants, limits and
// skip patterns, and the approve command; --copy brings the local module
// in; running the proposed command approves it as proposed.
func TestToolsImportHyperMCP(t *testing.T) {
	e := newCLIEnv(t)
	src := filepath.Join(e.root, "src")
	data := filepath.Join(e.root, "data")
	for _, d := range []string{src, data} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	b, _ := os.ReadFile(filepath.Join(e.testdata, "hypermcpv2go.wasm"))
	if err := os.WriteFile(filepath.Join(src, "dyn.wasm"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := `plugins:
  dyn:
    path: ./dyn.wasm
    runtime_config:
      allowed_hosts: ["*", "api.example.com", "jsonplaceholder.*.com"]
      allowed_paths: ["` + data + `", "ro:` + src + `"]
      env_vars:
        API_KEY: "${MY_API_KEY}"
        region: eu-west-1
        token: plain-secret
      memory_limit: 256Mi
      skip_tools: ["tool_[0-9]+", "("]
      skip_prompts: ["x"]
  remote:
    url: oci://127.0.0.1:1/time-plugin:latest
  web:
    url: http://127.0.0.1:1/web.wasm
`
	cfgPath := filepath.Join(src, "config.yaml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	r := e.mustRun(0, "tools", "import", cfgPath, "--json", "--copy")
	var out struct{ Plugins []importProposal }
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || len(out.Plugins) != 3 {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	dyn, remote := out.Plugins[0], out.Plugins[1]
	wantGrants := []string{"net:*", "net:api.example.com", "fs.write:" + data, "fs.read:" + src,
		"config:API_KEY=$MY_API_KEY", "config:region=eu-west-1", "config:token=plain-secret"}
	if !slices.Equal(dyn.Grants, wantGrants) || dyn.Limits.Memory != 256<<20 || !slices.Equal(dyn.SkipTools, []string{"tool_[0-9]+"}) ||
		dyn.SHA256 != manifest.Sum(b) || dyn.File != filepath.Join("plugins", "dyn.wasm") {
		t.Errorf("dyn: %+v", dyn)
	}
	notes := strings.Join(dyn.Notes, "\n")
	for _, want := range []string{`allowed host "jsonplaceholder.*.com" cannot be granted`, `skip_tools "("`, "skip_prompts is not carried over",
		`config "token" looks like a secret`, "needs --force"} {
		if !strings.Contains(notes, want) {
			t.Errorf("dyn's notes lack %q:\n%s", want, notes)
		}
	}
	if strings.Contains(notes, `config "API_KEY" looks like a secret`) {
		t.Error("an environment reference is flagged as a written secret")
	}
	// A registry that is down: not pulled, saying so; an http:// URL is
	// not fetched at all.
	if remote.SHA256 != "" || !strings.Contains(strings.Join(remote.Notes, "\n"), "oci://127.0.0.1:1/time-plugin:latest was not pulled") {
		t.Errorf("remote: %+v", remote)
	}
	if web := out.Plugins[2]; web.SHA256 != "" || !strings.Contains(strings.Join(web.Notes, "\n"), "only oci:// and https:// modules are fetched") {
		t.Errorf("web: %+v", web)
	}
	if got, _ := os.ReadFile(filepath.Join(e.plugins, "dyn.wasm")); manifest.Sum(got) != manifest.Sum(b) {
		t.Fatal("--copy did not copy the module")
	}
	// The proposed command approves it as proposed.
	args := shellFields(t, dyn.Approve)
	if args[0] != "autoagent" {
		t.Fatalf("approve: %q", dyn.Approve)
	}
	e.mustRun(0, append(args[1:], "--yes")...)
	entry, ok := e.loadManifest().Lookup(dyn.SHA256)
	if !ok || entry.Limits.Memory != 256<<20 || !slices.Equal(entry.SkipTools, []string{"tool_[0-9]+"}) || len(entry.Grants) != len(wantGrants) {
		t.Errorf("approval %+v", entry)
	}
	// The text report says the same.
	r = e.mustRun(0, "tools", "import", cfgPath)
	for _, want := range []string{"plugin:    dyn", "grants:    net:*, net:api.example.com", "limits:    memory 256 MiB", "approve:   autoagent tools approve plugins/dyn.wasm"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("text lacks %q:\n%s", want, r.stdout)
		}
	}
}

// An Extism manifest is read with extism/go-sdk's own type.
func TestToolsImportExtismManifest(t *testing.T) {
	e := newCLIEnv(t)
	m := `{"wasm":[{"path":"plain.wasm","name":"plain"}],"allowed_hosts":["example.com"],
	 "allowed_paths":{"data":"/mnt","ro:/srv/ro":"/ro"},"config":{"greeting":"hi"},
	 "memory":{"max_pages":1600,"max_http_response_bytes":1048576},"timeout_ms":5000}`
	p := filepath.Join(e.root, "extism.json")
	if err := os.WriteFile(p, []byte(m), 0o644); err != nil {
		t.Fatal(err)
	}
	r := e.mustRun(0, "tools", "import", p, "--json")
	var out struct{ Plugins []importProposal }
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || len(out.Plugins) != 1 {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	got := out.Plugins[0]
	want := []string{"net:example.com", "fs.write:" + filepath.Join(e.root, "data") + "=/mnt", "fs.read:/srv/ro=/ro", "config:greeting=hi"}
	if got.Name != "plain" || !slices.Equal(got.Grants, want) || got.Limits.Memory != 100<<20 || got.Limits.Timeout != 5*time.Second || got.Limits.HTTPResponse != 1<<20 {
		t.Errorf("proposal %+v", got)
	}
	if r := e.run("", "tools", "import", filepath.Join(e.testdata, "SOURCES")); r.code == 0 {
		t.Errorf("a file that is neither: exit 0\n%s", r.stdout)
	}
}

// shellFields splits a command as a POSIX shell would, for the quoting
// shellQuote produces.
func shellFields(t *testing.T, s string) []string {
	t.Helper()
	var out []string
	var cur strings.Builder
	in, quoted := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quoted && c == '\'':
			quoted = false
		case quoted:
			cur.WriteByte(c)
		case c == '\'':
			quoted, in = true, true
		case c == ' ':
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteByte(c)
			in = true
		}
	}
	if in {
		out = append(out, cur.String())
	}
	return out
}

// A plugin's name in a config is not trusted: it becomes a file name in
// the plugins directory, and `../x` escaped it (the red team of issue 38).
// Every spelling that is not a module name proposes nothing and copies
// nothing; a valid name whose file in the plugins directory is a link is
// not written through.
func TestToolsImportRefusesNamesThatAreNotModuleNames(t *testing.T) {
	e := newCLIEnv(t)
	src := filepath.Join(e.root, "src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	b := mustRead(t, filepath.Join(e.testdata, "echo.wasm"))
	if err := os.WriteFile(filepath.Join(src, "m.wasm"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	victim := filepath.Join(e.root, "victim.wasm")
	if err := os.WriteFile(victim, []byte("the victim"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, filepath.Join(e.plugins, "linked.wasm")); err != nil {
		t.Fatal(err)
	}
	// The names as YAML keys: single quotes keep backslashes, double
	// quotes write a NUL.
	keys := []string{`'../escaped'`, `'/abs/escaped'`, `'a/../../escaped'`, `'..\..\escaped'`, `"nul\0byte"`, `'..'`, `'.hidden'`, `'-flag'`, `''`}
	var cfg strings.Builder
	cfg.WriteString("plugins:\n")
	for _, k := range append(keys, "linked") {
		cfg.WriteString("  " + k + ":\n    path: ./m.wasm\n")
	}
	bad := keys
	cfgPath := filepath.Join(src, "config.yaml")
	if err := os.WriteFile(cfgPath, []byte(cfg.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	r := e.mustRun(0, "tools", "import", cfgPath, "--json", "--copy")
	var out struct{ Plugins []importProposal }
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || len(out.Plugins) != len(bad)+1 {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	for _, p := range out.Plugins {
		notes := strings.Join(p.Notes, "\n")
		if p.Name == "linked" {
			if !strings.Contains(notes, "not a plain file: not overwritten") {
				t.Errorf("linked: %+v", p)
			}
			continue
		}
		if p.File != "" || p.Approve != "" || !strings.Contains(notes, "is not a module name") {
			t.Errorf("%q: file %q, approve %q, notes %s", p.Name, p.File, p.Approve, notes)
		}
	}
	// Nothing was written outside the plugins directory, nor through the
	// link.
	for _, p := range []string{filepath.Join(e.root, "escaped.wasm"), "/abs/escaped.wasm", filepath.Join(filepath.Dir(e.root), "escaped.wasm")} {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s was written", p)
		}
	}
	if got := string(mustRead(t, victim)); got != "the victim" {
		t.Errorf("written through the link: %q", got)
	}
	ents, err := os.ReadDir(e.plugins)
	if err != nil || len(ents) != 1 {
		t.Errorf("the plugins directory holds %v (%v), want only the link", ents, err)
	}
	// An Extism manifest's module name too.
	ext := filepath.Join(src, "extism.json")
	if err := os.WriteFile(ext, []byte(`{"wasm":[{"path":"m.wasm","name":"../escaped"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := e.mustRun(0, "tools", "import", ext, "--copy"); !strings.Contains(r.stdout, "is not a module name") {
		t.Errorf("Extism manifest: %s", r.stdout)
	}
	if _, err := os.Lstat(filepath.Join(e.root, "escaped.wasm")); err == nil {
		t.Error("the Extism manifest's name escaped the plugins directory")
	}
}
