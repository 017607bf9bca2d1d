package toolbuild

import (
	"bytes"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestEmbeddedGoPDKIsCurrent compares the Go PDK embedded in the package
// with pdk/go, file by file: a change to the PDK must reach the copy that
// tools without a go.mod are built with.
func TestEmbeddedGoPDKIsCurrent(t *testing.T) {
	const checkout = "../../pdk/go"
	want := map[string][]byte{}
	entries, err := os.ReadDir(checkout)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || strings.HasSuffix(name, "_test.go") || (!strings.HasSuffix(name, ".go") && name != "go.mod") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(checkout, name))
		if err != nil {
			t.Fatal(err)
		}
		want[name] = b
	}
	got := map[string][]byte{}
	err = fs.WalkDir(embeddedGoPDK, embeddedGoPDKDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := embeddedGoPDK.ReadFile(p)
		got[strings.TrimSuffix(path.Base(p), ".txt")] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	var stale []string
	for name, b := range want {
		if !bytes.Equal(got[name], b) {
			stale = append(stale, name)
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			stale = append(stale, name+" (no longer in pdk/go)")
		}
	}
	if len(stale) > 0 {
		slices.Sort(stale)
		t.Errorf("the embedded Go PDK differs from pdk/go in %s: run `go generate ./internal/toolbuild`", strings.Join(stale, ", "))
	}
	if len(want) < 10 || want["go.mod"] == nil {
		t.Errorf("read only %d files from %s", len(want), checkout)
	}
}
