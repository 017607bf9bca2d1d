package workspace_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/autoagent-go/autoagent/tool"
	"github.com/autoagent-go/autoagent/trace"
	"github.com/autoagent-go/autoagent/workspace"
)

func call(t *testing.T, tools []tool.Tool, name string, args any) tool.Result {
	t.Helper()
	for _, tl := range tools {
		if tl.Spec().Name == name {
			b, _ := json.Marshal(args)
			r, err := tl.Call(runCtx("r1"), tool.Call{ID: "c1", Name: name, Arguments: b})
			if err != nil {
				t.Fatal(err)
			}
			return r
		}
	}
	t.Fatalf("no tool %s", name)
	return tool.Result{}
}

func TestToolsFlagsAndFence(t *testing.T) {
	w, dir := open(t, workspace.Options{WriteExt: []string{".md"}})
	tools := workspace.Tools(w)
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Spec().Name)
		f := tool.FlagsOf(tl)
		write := tl.Spec().Name == "write_file" || tl.Spec().Name == "rollback"
		if write != slices.Contains(f.Permissions, "filesystem.write") || write == f.Untrusted || write == f.Idempotent {
			t.Errorf("%s flags %+v", tl.Spec().Name, f)
		}
	}
	if want := []string{"read_file", "write_file", "list_dir", "list_changes", "rollback"}; !slices.Equal(names, want) {
		t.Fatalf("tools %v", names)
	}
	for _, c := range []struct{ path, want string }{
		{"../demo.py", "path escapes the workspace"},
		{"virus.exe", "extension .exe is not allowed here: allowed .md"},
		{"C:/Windows/x.md", "absolute paths are not allowed"},
	} {
		r := call(t, tools, "write_file", map[string]string{"path": c.path, "content": "x"})
		if !r.IsError || !strings.Contains(r.Text(), c.want) {
			t.Errorf("write_file(%s) = %q (error %v)", c.path, r.Text(), r.IsError)
		}
	}
	r := call(t, tools, "write_file", map[string]string{"path": "r/report.md", "content": "# R\n", "reason": "the report"})
	if r.IsError || !strings.Contains(r.Text(), "change 1") {
		t.Fatalf("write_file = %q", r.Text())
	}
	if r := call(t, tools, "read_file", map[string]string{"path": "r/report.md"}); r.Text() != "# R\n" {
		t.Errorf("read_file = %q", r.Text())
	}
	if r := call(t, tools, "list_dir", map[string]string{}); r.Text() != "r/\n" {
		t.Errorf("list_dir = %q", r.Text())
	}
	r = call(t, tools, "list_changes", map[string]string{})
	var lc workspace.ListChangesOutput
	json.Unmarshal(r.StructuredContent, &lc)
	if len(lc.Changes) != 1 || lc.Changes[0].Reason != "the report" || lc.Changes[0].RunID != "r1" || lc.Changes[0].Tool != "write_file" {
		t.Errorf("list_changes = %s", r.Text())
	}
	if r := call(t, tools, "rollback", map[string]any{"change_id": 1, "last": true}); !r.IsError {
		t.Errorf("rollback with two selectors = %q", r.Text())
	}
	if r := call(t, tools, "rollback", map[string]any{"run_id": "r1"}); r.IsError {
		t.Errorf("rollback = %q", r.Text())
	}
	if _, err := os.Stat(filepath.Join(dir, "r")); !os.IsNotExist(err) {
		t.Errorf("r/ after the rollback: %v", err)
	}
}

func TestEvolve(t *testing.T) {
	var mu sync.Mutex
	var events []trace.Event
	tr := trace.New(trace.SinkFunc(func(ev trace.Event) { mu.Lock(); events = append(events, ev); mu.Unlock() }))
	w, dir := open(t, workspace.Options{Tracer: tr})
	ctx := runCtx("r1")
	must[workspace.Change](t)(w.Write(ctx, "conf.md", []byte("limit: 1\n")))
	before := tree(t, dir)
	// The validator is the host's: the configuration must say a limit
	// under 10.
	validate := func(ctx context.Context, w *workspace.Workspace) (bool, string, error) {
		b, err := w.Read("conf.md")
		if err != nil {
			return false, "", err
		}
		if strings.Contains(string(b), "limit: 1\n") || strings.Contains(string(b), "limit: 5\n") {
			return true, "ok", nil
		}
		return false, "conf.md: limit must be under 10, got " + strings.TrimSpace(string(b)), nil
	}
	res, err := workspace.Evolve(ctx, w, workspace.Proposal{Reason: "raise the limit", Files: []workspace.FileProposal{
		{Path: "conf.md", Content: "limit: 50\n"}, {Path: "new/notes.md", Content: "why\n"}}}, validate)
	if err != nil {
		t.Fatal(err)
	}
	if res.Kept || res.Rollback == nil || !strings.Contains(res.Output, "got limit: 50") {
		t.Fatalf("failing proposal: %+v", res)
	}
	if d := diffTrees(before, tree(t, dir)); d != "" {
		t.Fatalf("a rejected proposal left:\n%s", d)
	}
	res, err = workspace.Evolve(ctx, w, workspace.Proposal{Reason: "lower", Files: []workspace.FileProposal{
		{Path: "conf.md", Content: "limit: 5\n"}, {Path: "new/notes.md", Content: "why\n"}}}, validate)
	if err != nil || !res.Kept || res.Rollback != nil {
		t.Fatalf("passing proposal: %+v, %v", res, err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "new/notes.md")); string(b) != "why\n" {
		t.Errorf("kept proposal: notes.md = %q", b)
	}
	if c := must[workspace.Change](t)(w.Change(res.Change.ID)); c.Op != workspace.OpEvolve || len(c.Files) != 2 || c.Reason != "lower" {
		t.Errorf("journaled %+v", c)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(events) != 2 || events[0].Type != workspace.EvolveTrace || events[0].Payload.(trace.Fields)["kept"] != false ||
		events[1].Payload.(trace.Fields)["kept"] != true || events[0].RunID != "r1" {
		t.Errorf("traced %+v", events)
	}
}

func TestProposeChangeWithCommand(t *testing.T) {
	w, dir := open(t, workspace.Options{})
	pt := workspace.ProposeChange(w, workspace.Command("sh", "-c", "grep -q valid plan.md || { echo 'plan.md: not valid'; exit 1; }"))
	r := call(t, []tool.Tool{pt}, "propose_change", map[string]any{"reason": "try", "files": []map[string]string{{"path": "plan.md", "content": "nope"}}})
	var out workspace.ProposeOutput
	json.Unmarshal(r.StructuredContent, &out)
	if out.Kept || out.RollbackID == 0 || !strings.Contains(out.Output, "plan.md: not valid") {
		t.Fatalf("rejected proposal: %s", r.Text())
	}
	if _, err := os.Stat(filepath.Join(dir, "plan.md")); !os.IsNotExist(err) {
		t.Fatal("plan.md left behind")
	}
	r = call(t, []tool.Tool{pt}, "propose_change", map[string]any{"reason": "try", "files": []map[string]string{{"path": "plan.md", "content": "valid"}}})
	out = workspace.ProposeOutput{}
	json.Unmarshal(r.StructuredContent, &out)
	if !out.Kept {
		t.Fatalf("valid proposal: %s", r.Text())
	}
}
