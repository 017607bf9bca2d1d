package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/autoagent-go/autoagent/host"
	"github.com/autoagent-go/autoagent/manifest"
)

// cliEnv is a working directory with a plugins directory, for driving the
// tools verbs through run.
type cliEnv struct {
	t        *testing.T
	root     string
	plugins  string
	testdata string
}

func newCLIEnv(t *testing.T) *cliEnv {
	t.Helper()
	root := t.TempDir()
	// The kv stores go to the test's directory, the compiled-code cache to
	// the package's (see TestMain), neither to the user's.
	t.Setenv("XDG_CACHE_HOME", sharedCache)
	t.Setenv("XDG_DATA_HOME", filepath.Join(root, "data"))
	t.Setenv("USER", "tester")
	plugins := filepath.Join(root, "plugins")
	if err := os.Mkdir(plugins, 0o755); err != nil {
		t.Fatal(err)
	}
	testdata, err := filepath.Abs(filepath.Join("..", "..", "testdata", "wasm"))
	if err != nil {
		t.Fatal(err)
	}
	// The verbs default to ./plugins: run them where that is the test's.
	t.Chdir(root)
	return &cliEnv{t: t, root: root, plugins: plugins, testdata: testdata}
}

// add copies a module of testdata/wasm into the plugins directory.
func (e *cliEnv) add(name string) string {
	e.t.Helper()
	b, err := os.ReadFile(filepath.Join(e.testdata, name))
	if err != nil {
		e.t.Fatalf("test module: %v", err)
	}
	dst := filepath.Join(e.plugins, name)
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		e.t.Fatal(err)
	}
	return dst
}

func (e *cliEnv) manifestPath() string { return filepath.Join(e.plugins, "manifest.json") }

type result struct {
	code           int
	stdout, stderr string
}

func (e *cliEnv) run(stdin string, args ...string) result {
	e.t.Helper()
	var out, errb bytes.Buffer
	code := run(args, strings.NewReader(stdin), &out, &errb)
	return result{code, out.String(), errb.String()}
}

// mustRun runs and fails the test unless the exit code is want.
func (e *cliEnv) mustRun(want int, args ...string) result {
	e.t.Helper()
	r := e.run("", args...)
	if r.code != want {
		e.t.Fatalf("autoagent %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), r.code, want, r.stdout, r.stderr)
	}
	return r
}

func sha256Hex(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func (e *cliEnv) loadManifest() *manifest.Manifest {
	e.t.Helper()
	m, err := (&manifest.Store{Path: e.manifestPath()}).Load()
	if err != nil {
		e.t.Fatal(err)
	}
	return m
}

func TestToolsApproveListRevoke(t *testing.T) {
	e := newCLIEnv(t)
	kv := e.add("kv.wasm")
	sum := sha256Hex(t, kv)

	r := e.mustRun(0, "tools", "list", "--plugins", e.plugins)
	if !strings.Contains(r.stdout, "kv.wasm") || !strings.Contains(r.stdout, sum[:12]) || !strings.Contains(r.stdout, "pending") {
		t.Errorf("list before approval:\n%s", r.stdout)
	}

	// A memory limit past the 32-bit address space is refused, not
	// wrapped around to some other limit (or to 0, the default).
	for _, mb := range []string{"4097", "17592186044416", "-1"} {
		r = e.mustRun(2, "tools", "approve", kv, "--grant", "kv:notes", "--by", "alice", "--yes", "--memory", mb)
		if !strings.Contains(r.stderr, "--memory "+mb+": want 0 (the default, 64) to 4096 MiB") {
			t.Errorf("approve --memory %s: %s", mb, r.stderr)
		}
	}
	r = e.mustRun(0, "tools", "approve", kv, "--grant", "kv:notes", "--by", "alice", "--note", "reviewed", "--yes", "--memory", "32", "--timeout", "2s")
	for _, want := range []string{"sha256:    " + sum, "requests:  kv:notes", "grants:    kv:notes", "memory 32 MiB, timeout 2s", "Approved " + kv + " -> " + sum[:12]} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("approve output lacks %q:\n%s", want, r.stdout)
		}
	}
	e2, ok := e.loadManifest().Lookup(sum)
	if !ok {
		t.Fatal("approval not in the manifest")
	}
	if e2.Name != "kv" || e2.File != "kv.wasm" || grantList(e2.Grants) != "kv:notes" || e2.ApprovedBy != "alice" || e2.Note != "reviewed" ||
		e2.Limits != (manifest.Limits{Memory: 32 << 20, Timeout: 2 * time.Second}) {
		t.Errorf("manifest entry = %+v", e2)
	}

	r = e.mustRun(0, "tools", "list", "--plugins", e.plugins, "--json")
	var out listOutput
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("list --json: %v\n%s", err, r.stdout)
	}
	if len(out.Plugins) != 1 {
		t.Fatalf("list --json plugins = %+v", out.Plugins)
	}
	p := out.Plugins[0]
	if p.Name != "kv" || p.SHA256 != sum || p.Status != "approved" || !slices.Equal(p.Grants, []string{"kv:notes"}) ||
		!slices.Equal(p.Tools, []string{"kv"}) || p.ApprovedBy != "alice" {
		t.Errorf("list --json row = %+v", p)
	}

	// The audit log has the approval.
	var recs []manifest.AuditEntry
	for rec, err := range manifest.ReadLog(filepath.Join(e.plugins, "manifest.log.jsonl")) {
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, rec)
	}
	if len(recs) != 1 || recs[0].Action != "approve" || recs[0].By != "alice" || recs[0].SHA256 != sum {
		t.Errorf("audit log = %+v", recs)
	}

	r = e.mustRun(0, "tools", "revoke", "kv", "--plugins", e.plugins)
	if !strings.Contains(r.stdout, "Revoked kv: "+sum[:12]) {
		t.Errorf("revoke output:\n%s", r.stdout)
	}
	if e.loadManifest().Len() != 0 {
		t.Error("revoke left the approval")
	}
	r = e.mustRun(0, "tools", "list", "--plugins", e.plugins)
	if !strings.Contains(r.stdout, "pending") {
		t.Errorf("list after revoke:\n%s", r.stdout)
	}
	r = e.mustRun(1, "tools", "revoke", "kv", "--plugins", e.plugins)
	if !strings.Contains(r.stderr, "no approval matches") {
		t.Errorf("second revoke: %s", r.stderr)
	}
	recs = nil
	for rec := range manifest.ReadLog(filepath.Join(e.plugins, "manifest.log.jsonl")) {
		recs = append(recs, rec)
	}
	if len(recs) != 2 || recs[1].Action != "revoke" || recs[1].By != "tester" {
		t.Errorf("audit log after revoke = %+v", recs)
	}
}

func TestToolsApproveRefusals(t *testing.T) {
	e := newCLIEnv(t)
	kv := e.add("kv.wasm")
	malformed := e.add("malformed.wasm")
	tests := []struct {
		name  string
		stdin string
		args  []string
		code  int
		want  string
	}{
		{"no terminal, no --yes", "y\n", []string{kv, "--grant", "kv:notes"}, 2, "pass --yes"},
		{"more than requested", "", []string{kv, "--grant", "kv:notes", "--grant", "env:HOME", "--yes"}, 1,
			"refusing to grant env:HOME to " + kv + ": the module requests kv:notes; pass --force"},
		{"grant outside the grammar", "", []string{kv, "--grant", "net:a.*.com", "--yes"}, 2,
			`invalid grant "net:a.*.com": net: a wildcard is only allowed as a leading '*.' label`},
		{"unknown kind", "", []string{kv, "--grant", "disk:/x", "--yes"}, 2, `unknown kind "disk"`},
		{"not a module", "", []string{malformed, "--yes"}, 1, "cannot approve " + malformed},
		{"not .wasm", "", []string{filepath.Join(e.plugins, "x.txt"), "--yes"}, 2, "must end in .wasm"},
		{"bad timeout", "", []string{kv, "--timeout", "1500us", "--yes"}, 2, "whole milliseconds"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.run(tt.stdin, append([]string{"tools", "approve"}, tt.args...)...)
			if r.code != tt.code || !strings.Contains(r.stderr, tt.want) {
				t.Errorf("exit %d, stderr:\n%s\nwant exit %d and %q", r.code, r.stderr, tt.code, tt.want)
			}
			if _, err := os.Stat(e.manifestPath()); err == nil {
				t.Fatal("a refused approval wrote the manifest")
			}
		})
	}

	// --force grants it, and the audit log says what was forced; the flag
	// does not stick to the next invocation.
	e.mustRun(0, "tools", "approve", kv, "--grant", "kv:notes", "--grant", "env:HOME", "--yes", "--force")
	var forced []string
	for rec := range manifest.ReadLog(filepath.Join(e.plugins, "manifest.log.jsonl")) {
		forced = manifest.GrantStrings(rec.Forced)
	}
	if !slices.Equal(forced, []string{"env:HOME"}) {
		t.Errorf("audit log forced = %v", forced)
	}
	r := e.run("", "tools", "approve", kv, "--grant", "kv:notes", "--grant", "clock", "--yes")
	if r.code != 1 || !strings.Contains(r.stderr, "pass --force") {
		t.Errorf("--force stuck to a later invocation: exit %d %s", r.code, r.stderr)
	}
}

// A relative fs path on the command line means a directory under the
// working directory; the manifest holds the absolute path.
func TestToolsApproveRelativeFSGrant(t *testing.T) {
	e := newCLIEnv(t)
	b, err := os.ReadFile(filepath.Join(e.testdata, "wasicmd.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	side, err := os.ReadFile(filepath.Join(e.testdata, "wasicmd.tool.json"))
	if err != nil {
		t.Fatal(err)
	}
	mod := filepath.Join(e.plugins, "wasicmd.wasm")
	os.WriteFile(mod, b, 0o644)
	os.WriteFile(filepath.Join(e.plugins, "wasicmd.tool.json"), side, 0o644)
	if err := os.MkdirAll(filepath.Join(e.root, "data", "in"), 0o755); err != nil {
		t.Fatal(err)
	}
	e.mustRun(0, "tools", "approve", "plugins/wasicmd.wasm", "--grant", "fs.read:data/in", "--grant", "clock", "--yes", "--force")
	m := e.loadManifest()
	entry, ok := m.Lookup(sha256Hex(t, mod))
	if !ok {
		t.Fatal("not approved")
	}
	want := "fs.read:" + filepath.Join(e.root, "data", "in")
	if got := grantList(entry.Grants); got != "clock, "+want {
		t.Errorf("grants = %s, want clock, %s", got, want)
	}
	if entry.SidecarSHA256 != sha256Hex(t, filepath.Join(e.plugins, "wasicmd.tool.json")) {
		t.Errorf("sidecar not pinned: %q", entry.SidecarSHA256)
	}
	// The default plugins directory is ./plugins.
	r := e.mustRun(0, "tools", "list")
	if !strings.Contains(r.stdout, "approved") {
		t.Errorf("list with defaults:\n%s", r.stdout)
	}
}

func TestToolsVerify(t *testing.T) {
	e := newCLIEnv(t)
	echo := e.add("echo.wasm")
	kv := e.add("kv.wasm")
	e.mustRun(0, "tools", "approve", echo, "--yes")
	e.mustRun(0, "tools", "approve", kv, "--grant", "kv:notes", "--yes")
	e.add("fetch.wasm") // pending: counted, not failed

	r := e.mustRun(0, "tools", "verify", "--plugins", e.plugins)
	if !strings.Contains(r.stdout, "ok: 2 approved files") || !strings.Contains(r.stdout, "1 pending (no approval): fetch.wasm") {
		t.Errorf("verify:\n%s", r.stdout)
	}

	// One flipped byte.
	b, _ := os.ReadFile(echo)
	b[len(b)-1] ^= 0x01
	os.WriteFile(echo, b, 0o644)
	r = e.mustRun(1, "tools", "verify", "--plugins", e.plugins)
	if !strings.Contains(r.stdout, echo+": changed since approval") || strings.Contains(r.stdout, kv+":") {
		t.Errorf("verify after a flipped byte:\n%s", r.stdout)
	}
	// Exit 1 means the operation failed with its message on stderr
	// (docs/ARCHITECTURE.md §8): the message names the changed file.
	if !strings.HasPrefix(r.stderr, "autoagent: verify: 1 of 2 approved files failed") || !strings.Contains(r.stderr, echo) {
		t.Errorf("verify after a flipped byte: stderr %q", r.stderr)
	}
	r = e.mustRun(0, "tools", "list", "--plugins", e.plugins)
	for _, line := range strings.Split(r.stdout, "\n") {
		if strings.HasPrefix(line, "echo ") && !strings.Contains(line, "pending") {
			t.Errorf("tampered echo listed as %q", line)
		}
	}

	// A missing approved file.
	os.Remove(kv)
	r = e.mustRun(1, "tools", "verify", "--plugins", e.plugins)
	if !strings.Contains(r.stdout, kv+": missing") || !strings.Contains(r.stderr, "2 of 2 approved files failed") {
		t.Errorf("verify with a missing file:\n%s", r.stdout)
	}
	r = e.mustRun(0, "tools", "list", "--plugins", e.plugins)
	if !strings.Contains(r.stdout, "missing") {
		t.Errorf("list with a missing file:\n%s", r.stdout)
	}
}

func TestToolsCorruptManifest(t *testing.T) {
	e := newCLIEnv(t)
	kv := e.add("kv.wasm")
	bad := []byte("{\"version\": 1,\n  \"tools\": {\"abc\":}\n}\n")
	if err := os.WriteFile(e.manifestPath(), bad, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"tools", "approve", kv, "--grant", "kv:notes", "--yes"},
		{"tools", "revoke", "kv", "--plugins", e.plugins},
		{"tools", "list", "--plugins", e.plugins},
		{"tools", "verify", "--plugins", e.plugins},
	} {
		r := e.run("", args...)
		if r.code != 1 || !strings.Contains(r.stderr, e.manifestPath()+":2:19: invalid character '}'") {
			t.Errorf("%v: exit %d, stderr %s", args, r.code, r.stderr)
		}
		if got, _ := os.ReadFile(e.manifestPath()); !bytes.Equal(got, bad) {
			t.Fatalf("%v changed the corrupt manifest", args)
		}
	}
	r := e.run("", "tools", "inspect", kv, "--plugins", e.plugins)
	if r.code != 0 || !strings.Contains(r.stdout, "status:    unknown") || !strings.Contains(r.stderr, e.manifestPath()) {
		t.Errorf("inspect with a corrupt manifest: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}

func TestToolsInspect(t *testing.T) {
	e := newCLIEnv(t)
	fetch := e.add("fetch.wasm")
	sum := sha256Hex(t, fetch)
	r := e.mustRun(0, "tools", "inspect", fetch, "--plugins", e.plugins)
	for _, want := range []string{
		"sha256:    " + sum, "abi:       extism", "status:    pending: no approval", "requests:  net:example.com",
		"imports:   call for net grants", "ungranted: extism:host/env.http_request (needs net:)",
		"  fetch\n    Fetches a URL.\n    input:  {\"type\":\"object\"",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("inspect lacks %q:\n%s", want, r.stdout)
		}
	}
	e.mustRun(0, "tools", "approve", fetch, "--grant", "net:example.com", "--yes", "--by", "bob")
	r = e.mustRun(0, "tools", "inspect", fetch, "--plugins", e.plugins, "--json")
	var out inspectOutput
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("inspect --json: %v\n%s", err, r.stdout)
	}
	if out.SHA256 != sum || out.Status != "approved" || out.Approval == nil || out.Approval.ApprovedBy != "bob" ||
		!slices.Equal(out.Requested, []string{"net:example.com"}) || !slices.Equal(out.Needs, []string{"net"}) ||
		len(out.Describe.Tools) != 1 || out.Describe.Tools[0].Name != "fetch" {
		t.Errorf("inspect --json = %+v", out)
	}
	// docs/ARCHITECTURE.md §8: "describe + sha256 + requested capabilities + status",
	// under those names.
	var keys map[string]json.RawMessage
	if err := json.Unmarshal([]byte(r.stdout), &keys); err != nil {
		t.Fatal(err)
	}
	if string(keys["capabilities"]) == "" || compactJSONText(t, keys["capabilities"]) != `["net:example.com"]` ||
		keys["describe"] == nil || keys["sha256"] == nil || compactJSONText(t, keys["status"]) != `"approved"` {
		t.Errorf("inspect --json keys: %s", r.stdout)
	}

	bad := e.add("baddescribe.wasm")
	r = e.run("", "tools", "inspect", bad)
	if r.code != 1 || !strings.Contains(r.stdout, "sha256:    "+sha256Hex(t, bad)) || !strings.Contains(r.stdout, "status:    invalid: ") || !strings.Contains(r.stderr, "describe") {
		t.Errorf("inspect of a bad module: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	// With --json, stdout stays one JSON object: status invalid, and why.
	r = e.run("", "tools", "inspect", bad, "--json")
	var invalid map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &invalid); err != nil {
		t.Fatalf("inspect --json of a bad module: stdout is not JSON: %v\n%s", err, r.stdout)
	}
	if r.code != 1 || invalid["status"] != "invalid" || invalid["sha256"] != sha256Hex(t, bad) ||
		!strings.Contains(fmt.Sprint(invalid["reason"]), "describe") || !strings.Contains(r.stderr, "describe") {
		t.Errorf("inspect --json of a bad module: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}

func compactJSONText(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	return b.String()
}

// TestManifestBesideModule: without --plugins or --manifest, approve and
// inspect use the manifest of the module's own directory, wherever the
// command runs (docs/ARCHITECTURE.md §8 gives approve and inspect only FILE.wasm).
func TestManifestBesideModule(t *testing.T) {
	e := newCLIEnv(t)
	echo := e.add("echo.wasm")
	elsewhere := t.TempDir()
	t.Chdir(elsewhere)

	e.mustRun(0, "tools", "approve", echo, "--yes")
	if _, err := os.Stat(filepath.Join(elsewhere, "plugins")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("approve wrote into the working directory's plugins/ (%v)", err)
	}
	r := e.mustRun(0, "tools", "list", "--plugins", e.plugins)
	if !strings.Contains(r.stdout, "approved") {
		t.Errorf("list after approving %s from elsewhere:\n%s", echo, r.stdout)
	}
	r = e.mustRun(0, "tools", "inspect", echo)
	if !strings.Contains(r.stdout, "status:    approved by tester") || !strings.Contains(r.stdout, e.manifestPath()) {
		t.Errorf("inspect from elsewhere:\n%s", r.stdout)
	}
	// An explicit --manifest still wins.
	other := filepath.Join(elsewhere, "other.json")
	e.mustRun(0, "tools", "approve", echo, "--yes", "--manifest", other)
	if _, err := os.Stat(other); err != nil {
		t.Errorf("--manifest ignored: %v", err)
	}
}

// TestToolsRevokeByToolName: `tools revoke` takes a tool's name, as
// `tools call` does, and revokes the module that offers it.
func TestToolsRevokeByToolName(t *testing.T) {
	e := newCLIEnv(t)
	e.add("compute.wasm")
	e.mustRun(0, "tools", "approve", filepath.Join(e.plugins, "compute.wasm"), "--yes")
	r := e.mustRun(0, "tools", "revoke", "fib", "--plugins", e.plugins)
	if !strings.Contains(r.stdout, "fib is a tool of module compute") || !strings.Contains(r.stdout, "Revoked compute: ") {
		t.Errorf("revoke fib:\n%s", r.stdout)
	}
	if e.loadManifest().Len() != 0 {
		t.Error("the approval of compute is still there")
	}
	r = e.mustRun(1, "tools", "revoke", "nosuchtool", "--plugins", e.plugins)
	if !strings.Contains(r.stderr, "no approval matches") {
		t.Errorf("revoke of a name nothing offers: %s", r.stderr)
	}
}

// TestToolsRevokeTamperedByToolName: `tools revoke TOOL --manifest M`
// needs no --plugins (the plugins directory is M's), and finds the module
// by a tool name the manifest recorded at approval even after the module
// file was changed, when its describe no longer says so.
func TestToolsRevokeTamperedByToolName(t *testing.T) {
	e := newCLIEnv(t)
	dir := filepath.Join(e.root, "elsewhere", "tools")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(e.testdata, "compute.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	mod := filepath.Join(dir, "compute.wasm")
	if err := os.WriteFile(mod, b, 0o644); err != nil {
		t.Fatal(err)
	}
	e.mustRun(0, "tools", "approve", mod, "--yes")
	man := filepath.Join(dir, "manifest.json")
	m, err := (&manifest.Store{Path: man}).Load()
	if err != nil {
		t.Fatal(err)
	}
	if en, ok := m.Lookup(manifest.Sum(b)); !ok || !slices.Contains(en.Tools, "fib") {
		t.Fatalf("the approval does not record the module's tools: %+v", en)
	}
	// The plugins directory is the manifest's, not ./plugins.
	if r := e.mustRun(0, "tools", "list", "--manifest", man); !strings.Contains(r.stdout, "spin,fib") || strings.Contains(r.stdout, "missing") {
		t.Errorf("tools list --manifest does not list the manifest's directory:\n%s", r.stdout)
	}
	// Tampered: no longer a module at all.
	if err := os.WriteFile(mod, []byte("not wasm"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := e.mustRun(0, "tools", "revoke", "fib", "--manifest", man)
	if !strings.Contains(r.stdout, "fib is a tool of module compute") || !strings.Contains(r.stdout, "Revoked compute: ") {
		t.Errorf("revoke fib:\n%s", r.stdout)
	}
	if m, err := (&manifest.Store{Path: man}).Load(); err != nil || m.Len() != 0 {
		t.Errorf("the approval of compute is still there (%v)", err)
	}
}

// A module that imports clock_time_get and random_get asks for clock and
// random by that: approving it with them needs no --force; one that
// imports neither still does.
func TestApproveClockAndRandomImplied(t *testing.T) {
	e := newCLIEnv(t)
	// goecho's describe document requests nothing; the Go runtime
	// imports clock_time_get and random_get.
	goecho := e.add("goecho.wasm")
	r := e.mustRun(0, "tools", "inspect", goecho)
	if !strings.Contains(r.stdout, "requests:  clock, random") {
		t.Errorf("inspect does not show clock and random as requested:\n%s", r.stdout)
	}
	r = e.mustRun(0, "tools", "approve", goecho, "--grant", "clock", "--grant", "random", "--yes")
	if strings.Contains(r.stdout, "FORCED") {
		t.Errorf("clock and random reported as forced:\n%s", r.stdout)
	}
	entry, ok := e.loadManifest().Lookup(sha256Hex(t, goecho))
	if !ok || grantList(entry.Grants) != "clock, random" {
		t.Errorf("approval %+v", entry)
	}
	// Approved without them, it is not warned of calls being refused.
	e.mustRun(0, "tools", "revoke", "goecho")
	r = e.mustRun(0, "tools", "approve", goecho, "--yes")
	if strings.Contains(r.stdout, "not granted") {
		t.Errorf("warned of clock and random not granted:\n%s", r.stdout)
	}
	kv := e.add("kv.wasm")
	if r := e.run("", "tools", "approve", kv, "--grant", "kv:notes", "--grant", "clock", "--yes"); r.code != 1 || !strings.Contains(r.stderr, "refusing to grant clock") {
		t.Errorf("kv.wasm (no clock import) with clock: exit %d, %s", r.code, r.stderr)
	}
}

// A module importing host functions is reviewed and approved by the CLI,
// which has none of them: they are listed, requested, granted without
// --force and recorded; a grant of one it does not import is forced.
func TestApproveHostFunctions(t *testing.T) {
	e := newCLIEnv(t)
	fn := e.add("hostfn.wasm")
	r := e.mustRun(0, "tools", "inspect", fn)
	for _, want := range []string{"requests:  host:app.upper, host:extism:host/user.mult",
		"host functions: app.upper, extism:host/user.mult (each needs the grant host:NAME"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("inspect lacks %q:\n%s", want, r.stdout)
		}
	}
	r = e.mustRun(0, "tools", "inspect", fn, "--json")
	var out inspectOutput
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || !slices.Equal(out.HostFunctions, []string{"app.upper", "extism:host/user.mult"}) {
		t.Errorf("inspect --json: %v %+v", err, out)
	}
	if r := e.run("", "tools", "approve", fn, "--grant", "host:app.lower", "--yes"); r.code != 1 || !strings.Contains(r.stderr, "pass --force") {
		t.Errorf("a host function it does not import: exit %d %s", r.code, r.stderr)
	}
	r = e.mustRun(0, "tools", "approve", fn, "--grant", "host:app.upper", "--grant", "host:extism:host/user.mult", "--yes")
	if strings.Contains(r.stdout, "FORCED") {
		t.Errorf("host functions reported as forced:\n%s", r.stdout)
	}
	entry, ok := e.loadManifest().Lookup(sha256Hex(t, fn))
	if !ok || grantList(entry.Grants) != "host:app.upper, host:extism:host/user.mult" {
		t.Errorf("approval %+v", entry)
	}
}

// Imports present but not granted (issue 44 item 4): inspect lists them
// against the approval's grants (all of them while the module is
// pending), in text and JSON; approve lists those its grants leave out,
// and records the grants as given.
func TestInspectApproveUngranted(t *testing.T) {
	e := newCLIEnv(t)
	lazy := e.add("lazytime.wasm")
	r := e.mustRun(0, "tools", "inspect", lazy)
	for _, want := range []string{
		"imports:   call for net grants (without one the module loads, and those calls are refused)",
		"ungranted: extism:host/env.http_request (needs net:); with no grants the module loads, and each call of these is refused",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("inspect lacks %q:\n%s", want, r.stdout)
		}
	}
	ungranted := func() []host.GatedImport {
		t.Helper()
		r := e.mustRun(0, "tools", "inspect", lazy, "--json")
		var out struct {
			Ungranted []host.GatedImport `json:"ungranted"`
			Needs     []string           `json:"needs"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || out.Ungranted == nil || !slices.Equal(out.Needs, []string{"net"}) {
			t.Fatalf("inspect --json: %v\n%s", err, r.stdout)
		}
		return out.Ungranted
	}
	want := []host.GatedImport{{Import: "extism:host/env.http_request", Need: "net"}}
	if got := ungranted(); !slices.Equal(got, want) {
		t.Errorf("pending: ungranted %v, want %v", got, want)
	}
	// Approved with nothing (it requests nothing): approve says so, and
	// inspect lists it against the approval.
	r = e.mustRun(0, "tools", "approve", lazy, "--yes")
	if want := "  ungranted: extism:host/env.http_request (needs net:); with its grants the module loads, and each call of these is refused"; !strings.Contains(r.stdout, want) {
		t.Errorf("approve lacks %q:\n%s", want, r.stdout)
	}
	if got := ungranted(); !slices.Equal(got, want) {
		t.Errorf("approved without net: ungranted %v, want %v", got, want)
	}
	// Approved with a net grant: nothing is ungranted, in either command.
	r = e.mustRun(0, "tools", "approve", lazy, "--grant", "net:time.example.com", "--force", "--yes")
	if strings.Contains(r.stdout, "ungranted") {
		t.Errorf("approve with net: lists ungranted imports:\n%s", r.stdout)
	}
	if got := ungranted(); len(got) != 0 {
		t.Errorf("approved with net: ungranted %v", got)
	}
	if r := e.mustRun(0, "tools", "inspect", lazy); strings.Contains(r.stdout, "ungranted") {
		t.Errorf("inspect with net approved lists ungranted imports:\n%s", r.stdout)
	}
}

// A config grant names its secret by environment variable: the manifest
// records the reference, and the tool reads the value at call time.
func TestApproveConfigGrantFromEnvironment(t *testing.T) {
	e := newCLIEnv(t)
	t.Setenv("EVAL_TEST_TOKEN", "s3cret")
	echo := e.add("echo.wasm")
	// echo requests no config: granting one is more than it asks.
	if r := e.run("", "tools", "approve", echo, "--grant", "config:api-key=$EVAL_TEST_TOKEN", "--yes"); r.code != 1 || !strings.Contains(r.stderr, "pass --force") {
		t.Fatalf("unrequested config grant: exit %d %s", r.code, r.stderr)
	}
	e.mustRun(0, "tools", "approve", echo, "--grant", "config:api-key=$EVAL_TEST_TOKEN", "--yes", "--force")
	raw, err := os.ReadFile(e.manifestPath())
	if err != nil || !strings.Contains(string(raw), `config:api-key=$EVAL_TEST_TOKEN`) || strings.Contains(string(raw), "s3cret") {
		t.Fatalf("manifest: %v\n%s", err, raw)
	}
	r := e.mustRun(0, "tools", "call", "echo", "--tool", "config", "--args", `{"key":"api-key"}`)
	if !strings.Contains(r.stdout, "s3cret") {
		t.Errorf("tools call: %s", r.stdout)
	}
}

// --skip-tools (hyper-mcp's skip_tools) records patterns with the approval;
// the tools they match are not exposed.
func TestApproveSkipTools(t *testing.T) {
	e := newCLIEnv(t)
	echo := e.add("echo.wasm")
	if r := e.run("", "tools", "approve", echo, "--skip-tools", "fail(", "--yes"); r.code != 2 || !strings.Contains(r.stderr, "not a regular expression") {
		t.Errorf("a bad pattern: exit %d %s", r.code, r.stderr)
	}
	r := e.mustRun(0, "tools", "approve", echo, "--skip-tools", "fail.*", "--yes")
	if !strings.Contains(r.stdout, "skipped:   fail, failcode") {
		t.Errorf("approve does not show what is skipped:\n%s", r.stdout)
	}
	entry, ok := e.loadManifest().Lookup(sha256Hex(t, echo))
	if !ok || !slices.Equal(entry.SkipTools, []string{"fail.*"}) {
		t.Errorf("approval %+v", entry)
	}
	raw, _ := os.ReadFile(e.manifestPath())
	if !strings.Contains(string(raw), `"skip_tools": [`) {
		t.Errorf("manifest:\n%s", raw)
	}
	if r := e.mustRun(0, "tools", "call", "echo", "--args", `{"a":1}`); !strings.Contains(r.stdout, `"a":1`) {
		t.Errorf("echo: %s", r.stdout)
	}
	if r := e.run("", "tools", "call", "failcode", "--args", `{}`); r.code == 0 {
		t.Errorf("a skipped tool was called: %s", r.stdout)
	}
}
