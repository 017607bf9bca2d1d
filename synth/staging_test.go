package synth

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autoagent-go/autoagent/providers/scripted"
)

func TestStagingKeepsDifferentToolsOfOneName(t *testing.T) {
	w := scripted.New(
		turn(draft{Name: "calc", Source: `function run() { return 1 }`}),
		turn(draft{Name: "calc", Source: `function run() { return 2 }`}),
		turn(draft{Name: "calc", Source: `function run() { return 1 }`}),
	)
	b := newBuilder(t, w, nil)
	ctx := context.Background()
	var stems []string
	for i := 0; i < 3; i++ {
		tl, err := b.Build(ctx, Request{Capability: "x"})
		if err != nil {
			t.Fatal(err)
		}
		st, err := b.Stage(ctx, tl, nil)
		if err != nil {
			t.Fatal(err)
		}
		stems = append(stems, st.Stem)
		src, _ := os.ReadFile(st.Source)
		if string(src) != tl.Source() {
			t.Fatalf("staged source %q, want %q", src, tl.Source())
		}
	}
	// The same tool again reuses its stem; a different script of the same
	// name (same engine module!) gets its own.
	if strings.Join(stems, " ") != "calc calc-2 calc" {
		t.Fatalf("stems %v", stems)
	}
	entries, _ := os.ReadDir(b.opts.StagingDir)
	if len(entries) != 8 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Fatalf("staging holds %v", names)
	}
}

func TestStagingFailureIsReported(t *testing.T) {
	dir := t.TempDir()
	blocker := filepath.Join(dir, "file")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	b := newBuilder(t, scripted.New(turn(draft{Name: "t", Source: `function run() { return 1 }`})), func(o *Options) {
		o.StagingDir = filepath.Join(blocker, "staging")
	})
	tl, err := b.Build(context.Background(), Request{Capability: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Stage(context.Background(), tl, nil); err == nil || !strings.Contains(err.Error(), "staging directory") {
		t.Fatalf("err %v", err)
	}
}

func TestFindEngineSaysHowToBuild(t *testing.T) {
	t.Setenv(EngineEnv, filepath.Join(t.TempDir(), "missing.wasm"))
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("HOME", t.TempDir())
	wd, _ := os.Getwd()
	t.Chdir(t.TempDir())
	defer os.Chdir(wd)
	_, err := FindEngine(EngineFile)
	if !errors.Is(err, ErrNoEngine) || !strings.Contains(err.Error(), "make synth-engine") || !strings.Contains(err.Error(), EngineEnv) {
		t.Fatalf("err %v", err)
	}
	_, err = FindEngine(BridgeEngineFile)
	if !errors.Is(err, ErrNoEngine) || !strings.Contains(err.Error(), "-tags toolbridge") {
		t.Fatalf("err %v", err)
	}
	bad := filepath.Join(t.TempDir(), EngineFile)
	if err := os.WriteFile(bad, []byte("not wasm"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := readEngine(bad); !errors.Is(err, ErrNoEngine) || !strings.Contains(err.Error(), "not a WebAssembly module") {
		t.Fatalf("err %v", err)
	}
}

func TestPromoteMovesTheStagedTool(t *testing.T) {
	b := newBuilder(t, scripted.New(turn(draft{Name: "calc", Source: `function run() { return 1 }`})), nil)
	ctx := context.Background()
	tl, err := b.Build(ctx, Request{Capability: "x"})
	if err != nil {
		t.Fatal(err)
	}
	st, err := b.Stage(ctx, tl, nil)
	if err != nil {
		t.Fatal(err)
	}
	plugins := filepath.Join(t.TempDir(), "plugins")
	paths, err := Promote(st.Dir, st.Stem, plugins)
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != 4 || paths[0] != filepath.Join(plugins, "calc.wasm") {
		t.Fatalf("paths %v", paths)
	}
	if entries, _ := os.ReadDir(st.Dir); len(entries) != 0 {
		t.Fatalf("staging still holds %v", entries)
	}
	if sum := sidecarSum(filepath.Join(plugins, "calc.tool.json")); sum != st.SidecarSHA256 {
		t.Fatalf("sidecar changed in the move")
	}
	// A second promotion of the same name is refused, nothing is lost.
	st2, err := b.Stage(ctx, tl, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Promote(st2.Dir, st2.Stem, plugins); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("err %v", err)
	}
	if _, err := os.Stat(st2.Module); err != nil {
		t.Fatalf("the refused promotion lost the staged module: %v", err)
	}
	if _, err := Promote(st.Dir, "../x", plugins); err == nil {
		t.Fatalf("a path was accepted as a name")
	}
}

// A checkout that brings its own engine (the module every JavaScript tool
// is, and the code-mode build runs with tools: grants) is not where
// FindEngine takes it from, even when the working directory is in it:
// with no $AUTOAGENT_JS_ENGINE and nothing in the user cache, it fails
// saying how to name an engine.
func TestFindEngineNotTakenFromTheCheckout(t *testing.T) {
	checkout := t.TempDir()
	for _, f := range []string{filepath.Join("synth", "jsengine", "go.mod"), filepath.Join(".cache", "synth", EngineFile), filepath.Join(".cache", "synth", BridgeEngineFile)} {
		p := filepath.Join(checkout, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("\x00asm planted by the checkout"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sub := filepath.Join(checkout, "synth", "jsengine")
	t.Chdir(sub)
	t.Setenv(EngineEnv, "")
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("HOME", t.TempDir())
	for _, file := range []string{EngineFile, BridgeEngineFile} {
		p, err := FindEngine(file)
		if !errors.Is(err, ErrNoEngine) || !strings.Contains(err.Error(), EngineEnv) {
			t.Errorf("%s: %q %v; want ErrNoEngine naming %s, not the checkout's file", file, p, err, EngineEnv)
		}
	}
	// Named, the same file is taken: the rule is about where FindEngine
	// looks, not what it reads.
	t.Setenv(EngineEnv, filepath.Join(checkout, ".cache", "synth", EngineFile))
	if p, err := FindEngine(BridgeEngineFile); err != nil || p != filepath.Join(checkout, ".cache", "synth", BridgeEngineFile) {
		t.Errorf("named: %q %v", p, err)
	}
}
