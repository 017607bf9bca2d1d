package autoagent_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autoagent-go/autoagent"
	"github.com/autoagent-go/autoagent/providers/scripted"
	"github.com/autoagent-go/autoagent/workspace"
)

// Config.Workspace gives the model the workspace tools, fenced and
// journaled under the run's id; the run's policy file, inside the
// workspace, is not writable through it.
func TestRuntimeWorkspace(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	pol := filepath.Join(dir, "policy.md")
	os.WriteFile(pol, []byte(`{"rules":[]}`), 0o644)
	model := script(
		calls(tc("c1", "write_file", `{"path":"out/report.md","content":"# ok\n","reason":"the report"}`),
			tc("c2", "write_file", `{"path":"virus.exe","content":"MZ"}`),
			tc("c3", "write_file", `{"path":"policy.md","content":"x"}`)),
		calls(tc("c4", "write_file", `{"path":"../escape.md","content":"x"}`)),
		scripted.Turn{Text: "done"},
	)
	rt, err := autoagent.New(ctx, autoagent.Config{LLM: model, PolicyFile: pol,
		Workspace: autoagent.WorkspaceConfig{Dir: dir, WriteExt: []string{"md"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(ctx)
	res, err := rt.Run(ctx, "write the report")
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "out/report.md")); string(b) != "# ok\n" {
		t.Fatalf("report.md = %q", b)
	}
	seen, _ := json.Marshal(model.Requests()[1].Messages)
	for _, want := range []string{"extension .exe is not allowed here: allowed .md", "policy.md is protected (the run's policy"} {
		if !strings.Contains(string(seen), want) {
			t.Errorf("the model did not read %q in %s", want, seen)
		}
	}
	ws := rt.Workspace()
	n := 0
	for c, err := range ws.Changes(workspace.Filter{}) {
		if err != nil {
			t.Fatal(err)
		}
		n++
		if c.RunID != res.State.RunID || c.Tool != "write_file" || c.Reason != "the report" {
			t.Errorf("change %+v (run %s)", c, res.State.RunID)
		}
	}
	if n != 1 {
		t.Errorf("%d changes, want 1", n)
	}
	if _, err := ws.RollbackRun(ctx, res.State.RunID); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "out")); !os.IsNotExist(err) {
		t.Errorf("out/ after RollbackRun: %v", err)
	}
	if b, _ := os.ReadFile(pol); string(b) != `{"rules":[]}` {
		t.Errorf("the policy file holds %q", b)
	}
}
