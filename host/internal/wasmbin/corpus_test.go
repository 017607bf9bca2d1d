package wasmbin

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/tetratelabs/wazero"
)

// corpusDirs are the folders whose modules the differential tests read:
// the repository's own and, when present, the Extism fixtures beside it.
var corpusDirs = []string{
	"../../../testdata/wasm",
	"../../../plugins",
	"../../../pdk/conformance",
	"../../../.cache",
	"../../../../shared/fixtures/extism",
}

// corpus returns every .wasm file under corpusDirs, saying once which
// folders are absent.
func corpus(t testing.TB) []string {
	t.Helper()
	var files []string
	for _, d := range corpusDirs {
		if _, err := os.Stat(d); err != nil {
			t.Logf("corpus: %s is absent; its modules are not compared", d)
			continue
		}
		_ = filepath.WalkDir(d, func(p string, e os.DirEntry, err error) error {
			if err == nil && !e.IsDir() && filepath.Ext(p) == ".wasm" {
				files = append(files, p)
			}
			if err == nil && e.IsDir() && e.Name() == "node_modules" {
				return filepath.SkipDir
			}
			return nil
		})
	}
	sort.Strings(files)
	return files
}

// wazeroValid reports whether wazero (as the host configures it) accepts b.
func wazeroValid(t testing.TB, rt wazero.Runtime, b []byte) (err error) {
	t.Helper()
	defer func() {
		// wazero's own validator panics on some malformed modules (a
		// function whose type index is out of range, then called): count
		// that as a refusal, which ours must make first.
		if p := recover(); p != nil {
			err = fmt.Errorf("wazero panicked: %v", p)
		}
	}()
	m, err := rt.CompileModule(context.Background(), b)
	if err == nil {
		_ = m.Close(context.Background())
	}
	return err
}

func interpreter(t testing.TB) wazero.Runtime {
	rt := wazero.NewRuntimeWithConfig(context.Background(), wazero.NewRuntimeConfigInterpreter())
	t.Cleanup(func() { _ = rt.Close(context.Background()) })
	return rt
}

// TestCorpusAgreesWithWazero validates every module of the corpus with
// both validators: they must agree, except on the hostile corpus's compile
// bombs, valid modules past a limit.
func TestCorpusAgreesWithWazero(t *testing.T) {
	files := corpus(t)
	if len(files) < 20 {
		t.Fatalf("only %d modules in the corpus; the test modules of testdata/wasm alone are more", len(files))
	}
	rt := interpreter(t)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		_, ours := Validate(b, Limits{})
		if IsLimit(ours) {
			// A compile bomb of the hostile corpus, refused for its cost
			// before wazero sees it: asking wazero to compile it is the
			// cost (tens of seconds under -race), and what matters is
			// that what we accept, wazero accepts.
			continue
		}
		theirs := wazeroValid(t, rt, b)
		if (ours == nil) != (theirs == nil) {
			t.Errorf("%s: we say %v, wazero says %v", f, ours, theirs)
		}
		t.Logf("%s: %d bytes, valid=%v", filepath.Base(f), len(b), ours == nil)
	}
}
