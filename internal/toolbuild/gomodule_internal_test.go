package toolbuild

import (
	"archive/tar"
	"bytes"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite gopdk.tar from pdk/go")

// goPDKArchive archives the PDK at dir as embeddedGoPDK holds it: go.mod
// and the non-test .go files of the module's packages, by slash-separated
// relative path, sorted, with fixed metadata, so the same sources always
// give the same bytes.
func goPDKArchive(t *testing.T, dir string) []byte {
	t.Helper()
	var names []string
	err := filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		name := e.Name()
		if name == "go.mod" && p != filepath.Join(dir, "go.mod") {
			return fmt.Errorf("%s: a module inside the PDK", p)
		}
		if name == "go.mod" || strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go") {
			rel, err := filepath.Rel(dir, p)
			names = append(names, filepath.ToSlash(rel))
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(names)
	if len(names) < 10 || !slices.Contains(names, "go.mod") {
		t.Fatalf("read only %d files from %s: %v", len(names), dir, names)
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, name := range names {
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil {
			t.Fatal(err)
		}
		h := &tar.Header{Name: name, Mode: 0o644, Size: int64(len(b)), ModTime: time.Unix(0, 0), Typeflag: tar.TypeReg, Format: tar.FormatUSTAR}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestEmbeddedGoPDKIsCurrent compares the Go PDK embedded in the package
// with pdk/go: a change to the PDK must reach the copy that tools without
// a go.mod are built with. -update rewrites the archive.
func TestEmbeddedGoPDKIsCurrent(t *testing.T) {
	want := goPDKArchive(t, "../../pdk/go")
	if *update {
		if err := os.WriteFile("gopdk.tar", want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if !bytes.Equal(embeddedGoPDK, want) {
		t.Errorf("the embedded Go PDK (gopdk.tar) differs from pdk/go: run `go generate ./internal/toolbuild`")
	}
}

// The archive unpacks into a module with the PDK's go.mod and sources.
func TestWriteEmbeddedGoPDK(t *testing.T) {
	dir := t.TempDir()
	mod, err := writeEmbeddedGoPDK(dir)
	if err != nil {
		t.Fatal(err)
	}
	if mod.module != goPDKModule || mod.goVersion == "" {
		t.Errorf("go.mod read as %+v", mod)
	}
	for _, name := range []string{"go.mod", "tool.go", "exports_wasip1.go", "extism/env_wasip1.go", "extism/block.go"} {
		want, err := os.ReadFile(filepath.Join("../../pdk/go", name))
		if err != nil {
			t.Fatal(err)
		}
		if got, err := os.ReadFile(filepath.Join(dir, name)); err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s unpacked differs from pdk/go (%v)", name, err)
		}
	}
}

// An archive entry that is not a regular file inside the module is
// refused before anything is written outside the directory.
func TestUnpackGoPDKRefusesEscapes(t *testing.T) {
	for _, name := range []string{"../go.mod", "/etc/x.go", "extism/../../x.go", "./go.mod", "extism//block.go", ""} {
		var buf bytes.Buffer
		tw := tar.NewWriter(&buf)
		body := []byte("module " + goPDKModule + "\n")
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		tw.Write(body)
		tw.Close()
		root := t.TempDir()
		dir := filepath.Join(root, "pdk")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if _, err := unpackGoPDK(dir, buf.Bytes()); err == nil || !strings.Contains(err.Error(), "not a file inside the module") {
			t.Errorf("%q: err = %v", name, err)
		}
		if got := dirNames(t, root); !slices.Equal(got, []string{"pdk"}) {
			t.Errorf("%q: %v written beside the module", name, got)
		}
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	tw.WriteHeader(&tar.Header{Name: "extism", Mode: 0o755, Typeflag: tar.TypeSymlink, Linkname: "/tmp"})
	tw.Close()
	if _, err := unpackGoPDK(t.TempDir(), buf.Bytes()); err == nil {
		t.Error("a symbolic link was unpacked")
	}
}

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
