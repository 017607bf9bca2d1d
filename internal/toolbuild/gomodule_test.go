package toolbuild_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/autoagent-go/autoagent/host"
	"github.com/autoagent-go/autoagent/internal/toolbuild"
	"github.com/autoagent-go/autoagent/tool"
)

// tutorialGo is the Go tutorial's tool (pdk/README.md shows this file).
const tutorialGo = "../../pdk/conformance/go/main.go"

// lonelyTool copies the tutorial's main.go into a fresh directory outside
// any module, as a tool author who copied it would have it, and returns
// the directory.
func lonelyTool(t *testing.T) string {
	t.Helper()
	src, err := os.ReadFile(tutorialGo)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.go"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// callWordCount loads the module in the autoagent host and calls its
// word_count tool with the README's example text.
func callWordCount(t *testing.T, wasm string) {
	t.Helper()
	b, err := os.ReadFile(wasm)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	h, err := host.New(ctx, host.Options{KVDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(ctx)
	l, err := h.Load(ctx, host.Module{Name: "word_count", Bytes: b})
	if err != nil {
		t.Fatalf("loading the built module: %v", err)
	}
	defer l.Close(ctx)
	wc, ok := l.Tool("word_count")
	if !ok {
		t.Fatalf("the built module offers no word_count tool: %+v", l.Describe())
	}
	res, err := wc.Call(ctx, tool.Call{Name: "word_count", Arguments: json.RawMessage(`{"text":"héllo wörld"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || string(res.StructuredContent) != `{"words":2,"lines":1,"chars":11}` {
		t.Errorf("word_count(héllo wörld) = %+v, want 2 words, 1 line, 11 chars", res)
	}
}

// dirNames lists the names in dir.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// TestBuildGoWithoutModule builds the tutorial's main.go alone in a
// directory with no go.mod (the go command alone refuses it), with the
// Go PDK embedded in the package and with a checkout's pdk/go, as a file
// and as a directory, and runs the result in the host.
func TestBuildGoWithoutModule(t *testing.T) {
	checkout, err := filepath.Abs("../../pdk")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		file    bool
		pdkDir  string
		wantPDK string
	}{
		{"file/embedded PDK", true, "", "embedded in autoagent"},
		{"dir/embedded PDK", false, "", "embedded in autoagent"},
		{"file/checkout PDK", true, checkout, "from " + filepath.Join(checkout, "go")},
		// A pdk/ directory without the Go PDK in it falls back on the copy.
		{"file/PDK dir without go", true, t.TempDir(), "embedded in autoagent"},
	} {
		t.Run(c.name, func(t *testing.T) {
			// No $AUTOAGENT_PDK, and a temporary directory of our own to
			// see that the build's temporary module is removed.
			t.Setenv("AUTOAGENT_PDK", "")
			scratch := t.TempDir()
			t.Setenv("TMPDIR", scratch)
			dir := lonelyTool(t)
			source := dir
			if c.file {
				source = filepath.Join(dir, "main.go")
			}
			out := filepath.Join(t.TempDir(), "wc.wasm")
			var progress bytes.Buffer
			res, err := toolbuild.Build(context.Background(), source, toolbuild.Options{Output: out, PDKDir: c.pdkDir, Progress: &progress})
			if err != nil {
				t.Fatal(err)
			}
			if res.Language != toolbuild.Go || res.Output != out {
				t.Errorf("result = %+v", res)
			}
			callWordCount(t, out)
			if !strings.Contains(progress.String(), "no go.mod") || !strings.Contains(progress.String(), c.wantPDK) {
				t.Errorf("progress = %q, want it to say the source has no go.mod and the PDK is %s", progress.String(), c.wantPDK)
			}
			if got := dirNames(t, dir); !slices.Equal(got, []string{"main.go"}) {
				t.Errorf("the source directory holds %v after the build, want only main.go", got)
			}
			want, _ := os.ReadFile(tutorialGo)
			if got, _ := os.ReadFile(filepath.Join(dir, "main.go")); !bytes.Equal(got, want) {
				t.Error("the build changed main.go")
			}
			if left := dirNames(t, scratch); len(left) > 0 {
				t.Errorf("temporary files left behind: %v", left)
			}
		})
	}
}

// TestBuildGoWithoutModuleNamesUserFiles checks that a compile error in a
// source built in a temporary module names the user's file, not the copy.
func TestBuildGoWithoutModuleNamesUserFiles(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "main.go")
	if err := os.WriteFile(src, []byte("package main\n\nfunc main() { undefinedThing() }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "m.wasm")
	_, err := toolbuild.Build(context.Background(), src, toolbuild.Options{Output: out})
	var be *toolbuild.BuildError
	if !errors.As(err, &be) {
		t.Fatalf("err = %v, want a *BuildError", err)
	}
	if !strings.Contains(be.Output, src+":3:15: undefined: undefinedThing") {
		t.Errorf("the error does not name %s:3:15: %v", src, err)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a failed build left %s behind", out)
	}
	if got := dirNames(t, dir); !slices.Equal(got, []string{"main.go"}) {
		t.Errorf("the source directory holds %v after the build, want only main.go", got)
	}
}
