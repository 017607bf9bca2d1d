package plugindir

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/autoagent-go/autoagent/manifest"
	"github.com/autoagent-go/autoagent/tool"
)

// TestReloadReadsOnlyChangedFiles: a reload reads a module file again only
// when the file changed (or changed too recently to trust its times), so a
// directory of large pending files costs one read each, not one per
// reload; a change of one byte is still seen, and a file whose approval
// arrives is read to be loaded.
func TestReloadReadsOnlyChangedFiles(t *testing.T) {
	e := newPDEnv(t)
	e.put("alpha.wasm", waTextModule("from alpha", "a"), waSidecar(nil, "alpha_one"))
	e.approve("alpha.wasm", manifest.Limits{})
	e.put("beta.wasm", waTextModule("from beta", "b"), waSidecar(nil, "beta_one"))
	big := filepath.Join(e.dir, "big.wasm")
	if err := os.WriteFile(big, wasmHeader, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, 64<<20); err != nil { // wasm-headed, sparse
		t.Fatal(err)
	}
	saved := racyWindow
	racyWindow = 0
	t.Cleanup(func() { racyWindow = saved })
	ctx := context.Background()
	d := e.open(Options{})
	n0 := moduleReads.Load()
	for range 3 {
		if _, err := d.Reload(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if n := moduleReads.Load() - n0; n != 0 {
		t.Errorf("3 reloads of an unchanged directory read %d module files, want 0", n)
	}
	// One byte more: read again, and no longer approved.
	f, err := os.OpenFile(filepath.Join(e.dir, "alpha.wasm"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte{0})
	f.Close()
	n1 := moduleReads.Load()
	if _, err := d.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	if n := moduleReads.Load() - n1; n != 1 {
		t.Errorf("a changed file: %d reads, want 1", n)
	}
	if p, _ := d.Snapshot().Plugin("alpha"); p.Status == StatusApproved {
		t.Error("a changed file kept its approval")
	}
	// beta approved now: unchanged, but its bytes are read to load it.
	e.approve("beta.wasm", manifest.Limits{})
	n2 := moduleReads.Load()
	if _, err := d.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	if n := moduleReads.Load() - n2; n != 1 {
		t.Errorf("a newly approved file: %d reads, want 1 (to load it)", n)
	}
	if !slices.Contains(toolNames(d.Tools()), "beta_one") {
		t.Errorf("beta's tool after its approval: %v", toolNames(d.Tools()))
	}
	// A file changed within the racy window is read at every reload.
	racyWindow = time.Hour
	e.put("gamma.wasm", waTextModule("from gamma", "g"), waSidecar(nil, "gamma_one"))
	n3 := moduleReads.Load()
	d.Reload(ctx)
	d.Reload(ctx)
	if n := moduleReads.Load() - n3; n < 2*2 { // gamma and every other file, twice
		t.Errorf("recently changed files: %d reads over 2 reloads", n)
	}
}

// TestCopiedApprovalDoesNotKnockTheToolOut: with two approvals of one
// name, the older bytes copied in under another file name offer the same
// tool, and the one in its recorded file keeps it (the copy is shadowed),
// where before the conflict withdrew the tool from both.
func TestCopiedApprovalDoesNotKnockTheToolOut(t *testing.T) {
	e := newPDEnv(t)
	old := waTextModule("old", "o")
	e.put("echo.wasm", old, waSidecar(nil, "echo_tool"))
	e.approve("echo.wasm", manifest.Limits{})
	e.put("echo.wasm", waTextModule("current", "c"), waSidecar(nil, "echo_tool"))
	e.approve("echo.wasm", manifest.Limits{})
	e.put("aaa.wasm", old, waSidecar(nil, "echo_tool"))
	d := e.open(Options{})
	snap := d.Snapshot()
	if len(snap.Conflicts) != 0 {
		t.Errorf("conflicts %+v", snap.Conflicts)
	}
	if !slices.Contains(toolNames(d.Tools()), "echo_tool") {
		t.Fatalf("the tool is out of service: %v", toolNames(d.Tools()))
	}
	res, err := d.Tools()[0].Call(context.Background(), tool.Call{ID: "c", Name: "echo_tool", Arguments: json.RawMessage(`{}`)})
	if err != nil || res.Text() != "current" {
		t.Errorf("echo_tool ran %q (%v), want the current bytes", res.Text(), err)
	}
	for _, p := range snap.Plugins {
		if p.File == "aaa.wasm" && !slices.Contains(p.Shadowed, "echo_tool") {
			t.Errorf("the copy is not reported as shadowed: %+v", p)
		}
	}
}
