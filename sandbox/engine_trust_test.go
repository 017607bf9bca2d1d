package sandbox_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autoagent-go/autoagent"
	"github.com/autoagent-go/autoagent/codemode"
	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/providers/scripted"
	"github.com/autoagent-go/autoagent/sandbox"
	"github.com/autoagent-go/autoagent/synth"
)

// A checkout that brings its own code-mode engine (a module that would run
// with every tool of the run) is not where the runtime takes it from: with
// no $AUTOAGENT_JS_ENGINE and nothing in the user cache, code mode fails
// saying how to name an engine, and the checkout's file is never loaded.
func TestCodeModeEngineNotTakenFromTheCheckout(t *testing.T) {
	checkout := t.TempDir()
	for _, f := range []string{filepath.Join("synth", "jsengine", "go.mod"), filepath.Join(".cache", "synth", synth.BridgeEngineFile)} {
		p := filepath.Join(checkout, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		// Not even WebAssembly: loading it would fail loudly.
		if err := os.WriteFile(p, []byte("planted by the checkout"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(checkout)
	t.Setenv(synth.EngineEnv, "")
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("HOME", t.TempDir())
	_, err := autoagent.New(context.Background(), autoagent.Config{
		LLM:      scriptFrom(t, writeScript(t)),
		Features: []autoagent.Feature{&sandbox.Sandbox{CodeMode: sandbox.CodeModeConfig{Mode: codemode.Only}}},
	})
	if !errors.Is(err, synth.ErrNoEngine) || !strings.Contains(err.Error(), synth.EngineEnv) || strings.Contains(err.Error(), "not a WebAssembly module") {
		t.Fatalf("err %v; want ErrNoEngine naming %s, the checkout's file untouched", err, synth.EngineEnv)
	}
}

func writeScript(t *testing.T) string {
	p := filepath.Join(t.TempDir(), "script.jsonl")
	if err := os.WriteFile(p, []byte(`{"text":"done"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// scriptFrom is the scripted model that plays the script file at path.
func scriptFrom(t *testing.T, path string) llm.Provider {
	t.Helper()
	p, err := scripted.Load(path, scripted.Options{PerConversation: true})
	if err != nil {
		t.Fatal(err)
	}
	return p
}
