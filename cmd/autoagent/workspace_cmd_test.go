package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// run --workspace gives the model the workspace tools; workspace
// log --json lists each change (id, run_id, path, op), diff shows it, and
// rollback --run puts the directory back as it was.
func TestWorkspaceRunLogDiffRollback(t *testing.T) {
	e := newCLIEnv(t)
	out := filepath.Join(e.root, "_out")
	os.Mkdir(out, 0o755)
	os.WriteFile(filepath.Join(out, "keep.md"), []byte("kept\n"), 0o644)
	script := e.writeScript(
		`{"tool_calls":[{"id":"c1","name":"write_file","arguments":{"path":"report.md","content":"# Report\nok\n","reason":"first"}},{"id":"c2","name":"write_file","arguments":{"path":"virus.exe","content":"MZ"}},{"id":"c3","name":"write_file","arguments":{"path":"../demo.md","content":"x"}}]}`,
		// One call per step: calls of one step may run at once, and the
		// test names changes by their order in the journal.
		`{"tool_calls":[{"id":"c4","name":"write_file","arguments":{"path":"report.md","content":"# Report\nfine\n"}}]}`,
		`{"tool_calls":[{"id":"c5","name":"write_file","arguments":{"path":"keep.md","content":"changed\n"}}]}`,
		`{"text":"saved"}`)
	r := e.mustRun(0, "run", "--provider", "scripted", "--script", script, "--workspace", out, "--workspace-write-ext", "md", "--json", "write the report")
	for _, want := range []string{"extension .exe is not allowed here: allowed .md", "path escapes the workspace"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("the model did not read %q", want)
		}
	}
	if _, err := os.Stat(filepath.Join(e.root, "demo.md")); !os.IsNotExist(err) {
		t.Fatal("../demo.md was written")
	}
	r = e.mustRun(0, "workspace", "log", "--json", out)
	var changes []map[string]any
	for line := range strings.Lines(r.stdout) {
		var c map[string]any
		if err := json.Unmarshal([]byte(line), &c); err != nil {
			t.Fatalf("log --json line %q: %v", line, err)
		}
		changes = append(changes, c)
	}
	if len(changes) != 3 {
		t.Fatalf("log --json: %d changes\n%s", len(changes), r.stdout)
	}
	run, _ := changes[0]["run_id"].(string)
	if changes[0]["id"] != 1.0 || changes[0]["path"] != "report.md" || changes[0]["op"] != "write" || !strings.HasPrefix(run, "run_") {
		t.Errorf("first change %v", changes[0])
	}
	r = e.mustRun(0, "workspace", "log", out)
	if !strings.Contains(r.stdout, "report.md") || !strings.Contains(r.stdout, "first") {
		t.Errorf("log:\n%s", r.stdout)
	}
	r = e.mustRun(0, "workspace", "diff", "--change", "2", out)
	if !strings.Contains(r.stdout, "-ok\n+fine\n") {
		t.Errorf("diff:\n%s", r.stdout)
	}
	e.mustRun(2, "workspace", "rollback", out)
	r = e.mustRun(1, "workspace", "rollback", "--change", "1", out)
	if !strings.Contains(r.stderr, "roll back change 2 first") {
		t.Errorf("rollback of an overwritten change: %s", r.stderr)
	}
	e.mustRun(0, "workspace", "rollback", "--run", run, out)
	if _, err := os.Stat(filepath.Join(out, "report.md")); !os.IsNotExist(err) {
		t.Error("report.md survived the rollback")
	}
	if b, _ := os.ReadFile(filepath.Join(out, "keep.md")); string(b) != "kept\n" {
		t.Errorf("keep.md = %q", b)
	}
	r = e.mustRun(1, "workspace", "log", filepath.Join(e.root, "plugins"))
	if !strings.Contains(r.stderr, "is not a workspace") {
		t.Errorf("log of a plain directory: %s", r.stderr)
	}
}
