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

// TestBuildGoFiles builds sources held in memory with the embedded PDK:
// the module works in the host, the temporary module lives in TempDir and
// is removed, and a compile error names the file by its given name.
func TestBuildGoFiles(t *testing.T) {
	t.Setenv("AUTOAGENT_PDK", "")
	src, err := os.ReadFile(tutorialGo)
	if err != nil {
		t.Fatal(err)
	}
	scratch := t.TempDir()
	out := filepath.Join(t.TempDir(), "wc.wasm")
	var progress bytes.Buffer
	res, err := toolbuild.BuildGoFiles(context.Background(), map[string][]byte{"main.go": src},
		toolbuild.Options{Output: out, TempDir: scratch, Progress: &progress})
	if err != nil {
		t.Fatal(err)
	}
	if res.Language != toolbuild.Go || res.Output != out {
		t.Errorf("result = %+v", res)
	}
	callWordCount(t, out)
	if !strings.Contains(progress.String(), "building 1 Go file (Go)") || !strings.Contains(progress.String(), "embedded in autoagent") {
		t.Errorf("progress = %q", progress.String())
	}
	if left := dirNames(t, scratch); len(left) > 0 {
		t.Errorf("temporary files left in TempDir: %v", left)
	}

	bad := map[string][]byte{
		"main.go": []byte("package main\n\nfunc main() {}\n"),
		"tool.go": []byte("package main\n\nfunc run() { undefinedThing() }\n"),
	}
	_, err = toolbuild.BuildGoFiles(context.Background(), bad, toolbuild.Options{Output: out, TempDir: scratch})
	var be *toolbuild.BuildError
	if !errors.As(err, &be) || !strings.Contains(be.Output, "\ntool.go:3:14: undefined: undefinedThing") {
		t.Errorf("err = %v, want a *BuildError naming tool.go:3:14", err)
	}
	if be != nil && strings.Contains(be.Output, scratch) {
		t.Errorf("the compiler's message names the temporary module: %s", be.Output)
	}

	// The temporary module is made in TempDir, not in the system's.
	missing := filepath.Join(t.TempDir(), "missing")
	if _, err := toolbuild.BuildGoFiles(context.Background(), map[string][]byte{"main.go": src}, toolbuild.Options{Output: out, TempDir: missing}); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("with a TempDir that does not exist: err = %v", err)
	}
}

func TestBuildGoFilesRefusesNames(t *testing.T) {
	out := filepath.Join(t.TempDir(), "m.wasm")
	for _, name := range []string{"../main.go", "dir/main.go", "main_test.go", "go.mod", "main.c", ""} {
		_, err := toolbuild.BuildGoFiles(context.Background(), map[string][]byte{name: []byte("package main\n")}, toolbuild.Options{Output: out})
		if err == nil || !strings.Contains(err.Error(), "not a Go source file name") {
			t.Errorf("%q: err = %v", name, err)
		}
	}
	if _, err := toolbuild.BuildGoFiles(context.Background(), nil, toolbuild.Options{Output: out}); err == nil {
		t.Error("no files: no error")
	}
	if _, err := toolbuild.BuildGoFiles(context.Background(), map[string][]byte{"main.go": nil}, toolbuild.Options{}); err == nil {
		t.Error("no Output: no error")
	}
}

// TestOfflineBuild: with Offline the go command fetches no module and no
// toolchain, and the environment's GOFLAGS do not reach the build.
func TestOfflineBuild(t *testing.T) {
	t.Setenv("AUTOAGENT_PDK", "")
	ctx := context.Background()
	out := filepath.Join(t.TempDir(), "m.wasm")
	offline := toolbuild.Options{Output: out, Offline: true}
	var be *toolbuild.BuildError

	third := map[string][]byte{"main.go": []byte("package main\n\nimport \"example.com/nothing\"\n\nfunc main() { nothing.Do() }\n")}
	_, err := toolbuild.BuildGoFiles(ctx, third, offline)
	if !errors.As(err, &be) || !strings.Contains(be.Output, "GOPROXY=off") {
		t.Errorf("a third-party import built offline: err = %v", err)
	}

	// A go line the local toolchain is too old for is refused, not
	// downloaded, whatever GOTOOLCHAIN says.
	t.Setenv("GOTOOLCHAIN", "auto")
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module future\n\ngo 9.99\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644)
	_, err = toolbuild.Build(ctx, dir, offline)
	if !errors.As(err, &be) || !strings.Contains(be.Output, "GOTOOLCHAIN=local") {
		t.Errorf("a go line past the local toolchain built offline: err = %v", err)
	}

	// A build tag from the user's GOFLAGS would select the broken file.
	t.Setenv("GOFLAGS", "-tags=leak")
	src, err := os.ReadFile(tutorialGo)
	if err != nil {
		t.Fatal(err)
	}
	tagged := map[string][]byte{"main.go": src, "leak.go": []byte("//go:build leak\n\npackage main\n\nvar _ = undefinedThing\n")}
	if _, err := toolbuild.BuildGoFiles(ctx, tagged, offline); err != nil {
		t.Errorf("the environment's GOFLAGS reached an offline build: %v", err)
	}
	if _, err := toolbuild.BuildGoFiles(ctx, tagged, toolbuild.Options{Output: out}); err == nil {
		t.Error("GOFLAGS=-tags=leak did not reach a build that is not offline: the test proves nothing")
	}
}
