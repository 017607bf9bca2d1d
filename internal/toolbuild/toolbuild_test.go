package toolbuild_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero"

	"github.com/autoagent-go/autoagent/internal/toolbuild"
)

const conformance = "../../pdk/conformance"

func TestDetect(t *testing.T) {
	tmp := t.TempDir()
	write := func(rel, body string) string {
		p := filepath.Join(tmp, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("gomod/go.mod", "module x\n")
	write("gomod/extra.c", "") // go.mod wins over stray C files
	write("as/assembly/index.ts", "")
	write("as/package.json", "{}")
	write("c/tool.c", "")
	write("rust/lib.rs", "")
	write("zig/tool.zig", "")
	write("empty/README.md", "")
	for _, c := range []struct {
		path string
		want toolbuild.Language
	}{
		{filepath.Join(tmp, "gomod"), toolbuild.Go},
		{filepath.Join(tmp, "as"), toolbuild.AssemblyScript},
		{filepath.Join(tmp, "c"), toolbuild.C},
		{filepath.Join(tmp, "rust"), toolbuild.Rust},
		{filepath.Join(tmp, "zig"), toolbuild.Zig},
		{filepath.Join(tmp, "c", "tool.c"), toolbuild.C},
		{filepath.Join(tmp, "rust", "lib.rs"), toolbuild.Rust},
		{filepath.Join(tmp, "as", "assembly", "index.ts"), toolbuild.AssemblyScript},
		{filepath.Join(conformance, "go"), toolbuild.Go},
		{filepath.Join(conformance, "assemblyscript"), toolbuild.AssemblyScript},
	} {
		got, err := toolbuild.Detect(c.path)
		if err != nil || got != c.want {
			t.Errorf("Detect(%s) = %q, %v; want %q", c.path, got, err, c.want)
		}
	}
	for _, p := range []string{filepath.Join(tmp, "empty"), filepath.Join(tmp, "empty", "README.md")} {
		if _, err := toolbuild.Detect(p); !errors.Is(err, toolbuild.ErrUnknownLanguage) {
			t.Errorf("Detect(%s) = %v, want ErrUnknownLanguage", p, err)
		}
	}
	if _, err := toolbuild.Detect(filepath.Join(tmp, "nope")); err == nil || errors.Is(err, toolbuild.ErrUnknownLanguage) {
		t.Errorf("Detect(missing path) = %v, want a not-found error", err)
	}
}

// TestBuildEachLanguage builds each conformance tool into a fresh file and
// checks it is a WebAssembly module exporting describe and call.
func TestBuildEachLanguage(t *testing.T) {
	if testing.Short() {
		t.Skip("builds with every toolchain: skipped in -short mode")
	}
	for _, lang := range []string{"go", "c", "rust", "assemblyscript", "zig"} {
		t.Run(lang, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "m.wasm")
			var progress bytes.Buffer
			res, err := toolbuild.Build(context.Background(), filepath.Join(conformance, lang), toolbuild.Options{Output: out, Progress: &progress})
			var missing *toolbuild.MissingToolchainError
			if errors.As(err, &missing) {
				t.Skipf("%v (run `make deps`)", err)
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(res.Language) != lang || res.Output != out {
				t.Errorf("result = %+v", res)
			}
			b, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if int64(len(b)) != res.Size {
				t.Errorf("%s: %d bytes, the result says %d", out, len(b), res.Size)
			}
			// Compile it (without running it) to read its exports: the
			// names appearing somewhere in the bytes would prove nothing.
			ctx := context.Background()
			rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
			defer rt.Close(ctx)
			m, err := rt.CompileModule(ctx, b)
			if err != nil {
				t.Fatalf("%s is not a valid WebAssembly module: %v", out, err)
			}
			for _, export := range []string{"describe", "call"} {
				if _, ok := m.ExportedFunctions()[export]; !ok {
					t.Errorf("module does not export %s", export)
				}
			}
			if !strings.Contains(progress.String(), "building") {
				t.Errorf("no progress line: %q", progress.String())
			}
			left, _ := filepath.Glob(filepath.Join(filepath.Dir(out), ".toolbuild-*"))
			if len(left) > 0 {
				t.Errorf("temporary files left behind: %v", left)
			}
		})
	}
}

func TestBuildFailureKeepsNoOutput(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "broken.c")
	if err := os.WriteFile(src, []byte("int call(void) { return undefined_thing; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "broken.wasm")
	_, err := toolbuild.Build(context.Background(), src, toolbuild.Options{Output: out})
	var missing *toolbuild.MissingToolchainError
	if errors.As(err, &missing) {
		t.Skipf("%v (run `make deps`)", err)
	}
	var be *toolbuild.BuildError
	if !errors.As(err, &be) {
		t.Fatalf("err = %v, want a *BuildError", err)
	}
	if !strings.Contains(be.Error(), "undefined_thing") {
		t.Errorf("the error does not show the compiler's message: %v", be)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a failed build left %s behind", out)
	}
}

func TestMissingToolchain(t *testing.T) {
	out := filepath.Join(t.TempDir(), "m.wasm")
	for _, lang := range []toolbuild.Language{toolbuild.C, toolbuild.Go, toolbuild.Zig} {
		_, err := toolbuild.Build(context.Background(), filepath.Join(conformance, string(lang)), toolbuild.Options{
			Output:    out,
			Toolchain: map[toolbuild.Language]string{lang: "/nonexistent/compiler"},
		})
		var missing *toolbuild.MissingToolchainError
		if !errors.As(err, &missing) {
			t.Fatalf("%s: err = %v, want *MissingToolchainError", lang, err)
		}
		if missing.Language != lang || missing.Install == "" || !strings.Contains(err.Error(), "not installed") {
			t.Errorf("%s: unhelpful error %q", lang, err)
		}
	}
}
