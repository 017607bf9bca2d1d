package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A sandboxed module approved with fs.workspace writes three files in a
// run: each change is journaled before it happens, under the run's
// workspace rules (virus.exe and the journal itself are refused, and a
// read outside the read allowlist too), `workspace log` lists the
// module's changes with the run's id, and `workspace rollback --run`
// puts the directory back as it was (issue 40).
func TestModuleWritesThroughTheWorkspace(t *testing.T) {
	e := newCLIEnv(t)
	mod := e.add("fsjournal.wasm")
	e.add("fsjournal.tool.json")
	out := filepath.Join(e.root, "_out")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(out, "a.md"), []byte("A0"), 0o644)
	os.WriteFile(filepath.Join(out, "notes.txt"), []byte("private"), 0o644)
	e.mustRun(0, "tools", "approve", mod, "--grant", "fs.workspace:_out", "--yes")
	args, _ := json.Marshal(map[string]any{"dir": out, "ops": []map[string]string{
		{"op": "write", "path": "a.md", "text": "A1"},
		{"op": "write", "path": "b.md", "text": "B1"},
		{"op": "write", "path": "c.md", "text": "C1"},
		{"op": "write", "path": "a.md", "text": "A2"},
		{"op": "write", "path": "virus.exe", "text": "MZ"},
		{"op": "write", "path": ".autoagent-workspace/journal.jsonl", "text": "{}"},
		{"op": "read", "path": "notes.txt"},
	}})
	call, _ := json.Marshal(map[string]any{"tool_calls": []map[string]any{{"id": "c1", "name": "fsjournal", "arguments": json.RawMessage(args)}}})
	script := e.writeScript(string(call), `{"text":"written"}`)
	r := e.mustRun(0, "run", "--provider", "scripted", "--script", script, "--workspace", out,
		"--workspace-read-ext", "md", "--workspace-write-ext", "md", "--json", "write the files")
	for _, want := range []string{"write a.md: done", "write b.md: done", "write c.md: done", "write virus.exe: ", "write .autoagent-workspace/journal.jsonl: ", "read notes.txt: "} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("the module's report lacks %q:\n%s", want, r.stdout)
		}
	}
	for _, refused := range []string{"write virus.exe: done", "journal.jsonl: done", "private"} {
		if strings.Contains(r.stdout, refused) {
			t.Errorf("the module did what the workspace refuses (%q):\n%s", refused, r.stdout)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "virus.exe")); !os.IsNotExist(err) {
		t.Fatal("virus.exe was written")
	}
	if b, _ := os.ReadFile(filepath.Join(out, "a.md")); string(b) != "A2" {
		t.Fatalf("a.md = %q after the run", b)
	}
	r = e.mustRun(0, "workspace", "log", "--json", out)
	runs, paths := map[string]bool{}, map[string]int{}
	for line := range strings.Lines(r.stdout) {
		var c struct {
			RunID string `json:"run_id"`
			Path  string `json:"path"`
			Op    string `json:"op"`
		}
		if err := json.Unmarshal([]byte(line), &c); err != nil {
			t.Fatalf("log --json line %q: %v", line, err)
		}
		runs[c.RunID] = true
		paths[c.Path]++
	}
	// One before-image per file per call: a.md, written twice, once.
	if len(runs) != 1 || paths["a.md"] != 1 || paths["b.md"] != 1 || paths["c.md"] != 1 || len(paths) != 3 {
		t.Fatalf("log --json: runs %v, paths %v\n%s", runs, paths, r.stdout)
	}
	var run string
	for id := range runs {
		run = id
	}
	if !strings.HasPrefix(run, "run_") {
		t.Fatalf("the module's changes carry run id %q", run)
	}
	e.mustRun(0, "workspace", "rollback", "--run", run, out)
	if b, _ := os.ReadFile(filepath.Join(out, "a.md")); string(b) != "A0" {
		t.Errorf("a.md = %q after the rollback; want A0", b)
	}
	for _, n := range []string{"b.md", "c.md"} {
		if _, err := os.Stat(filepath.Join(out, n)); !os.IsNotExist(err) {
			t.Errorf("%s survived the rollback", n)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(out, "notes.txt")); string(b) != "private" {
		t.Errorf("notes.txt = %q", b)
	}
}
