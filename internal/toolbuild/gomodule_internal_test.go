package toolbuild

import (
	"archive/tar"
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite gopdk.tar from pdk/go")

// goPDKArchive archives the PDK at dir as embeddedGoPDK holds it: go.mod
// and the non-test .go files, by name, with fixed metadata, so the same
// sources always give the same bytes.
func goPDKArchive(t *testing.T, dir string) []byte {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		name := e.Name()
		if !e.IsDir() && (name == "go.mod" || strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go")) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	if len(names) < 10 || !slices.Contains(names, "go.mod") {
		t.Fatalf("read only %d files from %s: %v", len(names), dir, names)
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, name := range names {
		b, err := os.ReadFile(filepath.Join(dir, name))
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
	for _, name := range []string{"go.mod", "tool.go", "kernel_wasip1.go"} {
		want, err := os.ReadFile(filepath.Join("../../pdk/go", name))
		if err != nil {
			t.Fatal(err)
		}
		if got, err := os.ReadFile(filepath.Join(dir, name)); err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s unpacked differs from pdk/go (%v)", name, err)
		}
	}
}
