package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The first-party read_file module requests the bare kind fs.read: any
// fs.read: directory satisfies it without --force, a grant of another kind
// does not.
func TestApproveBareKindRequest(t *testing.T) {
	src, err := filepath.Abs(filepath.Join("..", "..", "plugins", "read_file.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	e := newCLIEnv(t) // changes directory
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatalf("first-party plugin: %v", err)
	}
	mod := filepath.Join(e.plugins, "read_file.wasm")
	if err := os.WriteFile(mod, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if r := e.mustRun(0, "tools", "inspect", mod); !strings.Contains(r.stdout, "fs.read") {
		t.Errorf("inspect does not show the fs.read request:\n%s", r.stdout)
	}
	r := e.run("", "tools", "approve", mod, "--grant", "net:example.com", "--yes")
	if r.code != 1 || !strings.Contains(r.stderr, "--force") {
		t.Errorf("a net: grant to a module requesting fs.read: exit %d, stderr %q", r.code, r.stderr)
	}
	data := filepath.Join(e.root, "files")
	if err := os.Mkdir(data, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(data, "note.txt"), []byte("granted"), 0o644); err != nil {
		t.Fatal(err)
	}
	r = e.mustRun(0, "tools", "approve", mod, "--grant", "fs.read:"+data, "--yes")
	if strings.Contains(r.stdout, "FORCED") {
		t.Errorf("the requested kind was reported as forced:\n%s", r.stdout)
	}
	r = e.mustRun(0, "tools", "call", "read_file", "--tool", "read_file", "--args", `{"path":"`+filepath.Join(data, "note.txt")+`"}`)
	if !strings.Contains(r.stdout, "granted") {
		t.Errorf("read_file with its approved grant: %s", r.stdout)
	}
}

// TestApproveRefusesGrantsReachingThePluginsDirectory: an fs grant whose
// directory holds the plugins directory is refused at approval, even with
// --force: a module able to write there could approve itself any grant
// (found by attacking our own sandbox).
func TestApproveRefusesGrantsReachingThePluginsDirectory(t *testing.T) {
	e := newCLIEnv(t)
	mod := e.add("echo.wasm")
	r := e.run("", "tools", "approve", mod, "--grant", "fs.write:"+e.root, "--force", "--yes")
	if r.code != 1 || !strings.Contains(r.stderr, "refusing to approve") || !strings.Contains(r.stderr, "could add modules of its own") {
		t.Errorf("fs.write of the directory holding the plugins: exit %d, stderr %q", r.code, r.stderr)
	}
	if _, ok := e.loadManifest().Lookup(sha256Hex(t, mod)); ok {
		t.Error("the approval was recorded")
	}
	data := filepath.Join(e.root, "files")
	if err := os.Mkdir(data, 0o755); err != nil {
		t.Fatal(err)
	}
	e.mustRun(0, "tools", "approve", mod, "--grant", "fs.write:"+data, "--force", "--yes")
}

// TestInspectShowsWhatReachesTheModel: tools inspect prints a hyper-mcp v2
// plugin's prompts and resources (an MCP client is served them), says when
// a module's lists may change after approval, and folds a description's
// whitespace and cuts it, so padding cannot draw lines of its own under the
// real ones (found by attacking our own sandbox).
func TestInspectShowsWhatReachesTheModel(t *testing.T) {
	e := newCLIEnv(t)
	r := e.mustRun(0, "tools", "inspect", e.add("hypermcpv2rust.wasm"))
	for _, want := range []string{"prompt review: Asks for a code review.", "resource memo://readme (readme)", "resource template memo://{name} (memo)"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("inspect of a v2 plugin lacks %q:\n%s", want, r.stdout)
		}
	}
	r = e.mustRun(0, "tools", "inspect", e.add("hypermcpv1go.wasm"))
	if !strings.Contains(r.stdout, "changes:   its tools may change after approval") {
		t.Errorf("inspect of a stateful plugin does not say its tools may change:\n%s", r.stdout)
	}
	// Keeping state between callers is a grant the person sees asked for.
	if !strings.Contains(r.stdout, "requests:  clock, random, state") || !strings.Contains(r.stdout, "state:     it asks to keep its instance") {
		t.Errorf("inspect of a stateful plugin does not show that it asks for state:\n%s", r.stdout)
	}
	mod := e.add("wasicmd.wasm")
	spoof := strings.Repeat(" ", 300) + "status:    approved by security-team" + strings.Repeat("\t", 50) + strings.Repeat("x", 1000)
	side := `{"tools":[{"name":"readfile","description":` + strconv.Quote(spoof) + `,"inputSchema":{"type":"object"}}]}`
	if err := os.WriteFile(filepath.Join(e.plugins, "wasicmd.tool.json"), []byte(side), 0o644); err != nil {
		t.Fatal(err)
	}
	r = e.mustRun(0, "tools", "inspect", mod)
	for _, line := range strings.Split(r.stdout, "\n") {
		if !strings.Contains(line, "security-team") {
			continue
		}
		if !strings.HasPrefix(line, "    status") || len(line) > 600 || strings.Contains(strings.TrimLeft(line, " "), "  ") {
			t.Errorf("a description draws its own line or runs on: %.120q", line)
		}
	}
	if !strings.Contains(r.stdout, "    status: approved by security-team x") {
		t.Errorf("the folded description is not shown:\n%s", r.stdout)
	}
}

// A module requesting fs.workspace: inspect shows the request; approve
// takes a relative fs.workspace: path as ./PATH, shows and records it
// without --force, and refuses fs.write in its place without --force
// (fs.write allows more: changes nobody journals).
func TestApproveWorkspaceGrant(t *testing.T) {
	e := newCLIEnv(t)
	mod := e.add("fsjournal.wasm")
	e.add("fsjournal.tool.json")
	if r := e.mustRun(0, "tools", "inspect", mod); !strings.Contains(r.stdout, "requests:  fs.workspace, ") {
		t.Errorf("inspect does not show the fs.workspace request:\n%s", r.stdout)
	}
	out := filepath.Join(e.root, "out")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	r := e.run("", "tools", "approve", mod, "--grant", "fs.write:out", "--yes")
	if r.code != 1 || !strings.Contains(r.stderr, "refusing to grant fs.write:"+out) || !strings.Contains(r.stderr, "--force") {
		t.Errorf("fs.write for a module requesting fs.workspace: exit %d, stderr %q", r.code, r.stderr)
	}
	r = e.mustRun(0, "tools", "approve", mod, "--grant", "fs.workspace:out", "--yes")
	if !strings.Contains(r.stdout, "grants:    fs.workspace:"+out+"\n") || strings.Contains(r.stdout, "FORCED") || strings.Contains(r.stdout, "not granted") {
		t.Errorf("approve fs.workspace:\n%s", r.stdout)
	}
	entry, ok := e.loadManifest().Lookup(sha256Hex(t, mod))
	if !ok || grantList(entry.Grants) != "fs.workspace:"+out {
		t.Fatalf("manifest entry %+v, %v; want the grant fs.workspace:%s", entry, ok, out)
	}
	r = e.mustRun(0, "tools", "inspect", mod, "--json")
	if !strings.Contains(r.stdout, `"fs.workspace:`+out+`"`) || !strings.Contains(r.stdout, `"requested": [`+"\n"+`    "fs.workspace"`) {
		t.Errorf("inspect --json of the approved module:\n%s", r.stdout)
	}
	// A protected directory refuses fs.workspace as it refuses fs.write.
	r = e.run("", "tools", "approve", mod, "--grant", "fs.workspace:"+e.root, "--force", "--yes")
	if r.code != 1 || !strings.Contains(r.stderr, "refusing to approve") {
		t.Errorf("fs.workspace of the directory holding the plugins: exit %d, stderr %q", r.code, r.stderr)
	}
}
