package conformance_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	extism "github.com/extism/go-sdk"
)

// languages are the PDKs under test, by the suffix of their module in build/.
var languages = []string{"go", "c", "rust", "assemblyscript", "zig"}

// modulePath returns build/word_count.LANG.wasm, skipping the test with the
// command that builds it when it is absent.
func modulePath(t testing.TB, lang string) string {
	t.Helper()
	p := filepath.Join("build", "word_count."+lang+".wasm")
	if _, err := os.Stat(p); err != nil {
		t.Skipf("%s not built: run `make pdk-conformance` (needs the toolchains of .ci/install.d/pdk.sh)", p)
	}
	return p
}

// module is a loaded word_count module.
type module struct {
	p *extism.Plugin
}

func load(t testing.TB, path string) *module {
	t.Helper()
	wasm, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	p, err := extism.NewPlugin(ctx, extism.Manifest{Wasm: []extism.Wasm{extism.WasmData{Data: wasm}}},
		extism.PluginConfig{EnableWasi: true}, nil)
	if err != nil {
		t.Fatalf("loading %s: %v", path, err)
	}
	t.Cleanup(func() { p.Close(ctx) })
	return &module{p: p}
}

func (m *module) call(t testing.TB, fn string, input []byte) []byte {
	t.Helper()
	rc, out, err := m.p.Call(fn, input)
	if err != nil {
		t.Fatalf("%s: %v", fn, err)
	}
	if rc != 0 {
		t.Fatalf("%s returned %d", fn, rc)
	}
	return out
}
