package conformance_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	extism "github.com/extism/go-sdk"
	"github.com/tetratelabs/wazero"

	"github.com/autoagent-go/autoagent/host"
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

func readModule(t testing.TB, lang string) []byte {
	t.Helper()
	b, err := os.ReadFile(modulePath(t, lang))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// newHost returns an autoagent host for the test, closed at its end.
func newHost(t testing.TB, opts host.Options) *host.Host {
	t.Helper()
	if opts.KVDir == "" {
		opts.KVDir = t.TempDir()
	}
	h, err := host.New(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close(context.Background()) })
	return h
}

// loadHost loads the word_count module of lang into h with no grants.
func loadHost(t testing.TB, h *host.Host, lang string, reuse bool) *host.Loaded {
	t.Helper()
	l, err := h.Load(context.Background(), host.Module{Name: "word_count_" + lang, Bytes: readModule(t, lang), Reuse: reuse})
	if err != nil {
		t.Fatalf("loading the %s module: %v", lang, err)
	}
	t.Cleanup(func() { l.Close(context.Background()) })
	return l
}

// rawModule runs a module's exports with raw bytes in the reference Extism
// host for Go (github.com/extism/go-sdk). The autoagent host validates
// arguments and writes the call document itself, so only a raw host can
// feed a module the malformed documents of the conformance cases.
type rawModule struct {
	p *extism.Plugin
}

func loadRaw(t testing.TB, lang string) *rawModule {
	t.Helper()
	ctx := context.Background()
	p, err := extism.NewPlugin(ctx, extism.Manifest{Wasm: []extism.Wasm{extism.WasmData{Data: readModule(t, lang)}}},
		extism.PluginConfig{EnableWasi: true, RuntimeConfig: wazero.NewRuntimeConfig().WithCompilationCache(rawCache())}, nil)
	if err != nil {
		t.Fatalf("loading the %s module: %v", lang, err)
	}
	t.Cleanup(func() { p.Close(ctx) })
	return &rawModule{p: p}
}

// rawCache keeps the raw host's compiled code across test runs (compiling
// the 3.5 MB Go module takes seconds, far more under -race), in the user
// cache directory when there is one.
var rawCache = sync.OnceValue(func() wazero.CompilationCache {
	if dir, err := os.UserCacheDir(); err == nil {
		if c, err := wazero.NewCompilationCacheWithDir(filepath.Join(dir, "autoagent", "conformance-extism")); err == nil {
			return c
		}
	}
	return wazero.NewCompilationCache()
})

func (m *rawModule) call(t testing.TB, fn string, input []byte) []byte {
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
