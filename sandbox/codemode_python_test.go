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
	"github.com/autoagent-go/autoagent/codemode/pyprogram"
	"github.com/autoagent-go/autoagent/internal/pyenginetest"
	"github.com/autoagent-go/autoagent/sandbox"
	"github.com/autoagent-go/autoagent/tool"
)

// A run offering programs in both languages runs each in its own engine,
// through the same gate; a program in a language not offered gets an
// error result naming those offered, and the run goes on.
func TestCodeModeInPythonAndJavaScript(t *testing.T) {
	t.Setenv(pyprogram.EngineEnv, pyenginetest.Path(t))
	type orderIn struct {
		ID int `json:"id"`
	}
	getOrder, err := tool.New("get_order", "Fetch an order by id.", func(_ context.Context, in orderIn) (map[string]int, error) {
		return map[string]int{"id": in.ID, "refund": 10 * in.ID}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(t.TempDir(), "script.jsonl")
	os.WriteFile(script, []byte(`{"tool_calls":[{"id":"js","name":"run_program","arguments":{"code":"let t = 0\nfor (const id of [1, 2, 3]) t += (await tools.get_order({id})).refund\nreturn {total: t}"}}]}
{"tool_calls":[{"id":"py","name":"run_program","arguments":{"language":"python","code":"return {'total': sum(tools.get_order(id=i)['refund'] for i in (1, 2, 3))}"}}]}
{"tool_calls":[{"id":"rb","name":"run_program","arguments":{"language":"ruby","code":"puts 1"}}]}
{"text":"60 both ways"}
`), 0o644)
	ctx := context.Background()
	rt, err := autoagent.New(ctx, autoagent.Config{
		LLM:      scriptFrom(t, script),
		Tools:    []tool.Tool{getOrder},
		Features: []autoagent.Feature{&sandbox.Sandbox{CodeMode: sandbox.CodeModeConfig{Mode: codemode.Only, Languages: []string{codemode.JavaScript, codemode.Python}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(ctx)
	res, err := rt.Run(ctx, "total the refunds")
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]string{
		"js": `{"result":{"total":60}}`,
		"py": `{"result":{"total":60}}`,
		"rb": `programs in "ruby" are not offered in this run: set "language" to "javascript" or "python"`,
	} {
		if got := resultOf(res.Messages, id); got != want {
			t.Errorf("%s: %q, want %q", id, got, want)
		}
	}
	if res.State.ToolCalls != 9 {
		t.Errorf("ToolCalls %d: want three programs and six calls", res.State.ToolCalls)
	}
}

// A checkout that brings its own Python engine is not where the runtime,
// nor pyprogram.FindEngine, takes it from, as for the JavaScript engine.
func TestCodeModePythonEngineNotTakenFromTheCheckout(t *testing.T) {
	checkout := t.TempDir()
	for _, f := range []string{filepath.Join("codemode", "pyprogram", "build", "build.sh"), filepath.Join(".cache", "python", pyprogram.EngineFile)} {
		p := filepath.Join(checkout, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("planted by the checkout"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(checkout)
	t.Setenv(pyprogram.EngineEnv, "")
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("HOME", t.TempDir())
	if p, err := pyprogram.FindEngine(); !errors.Is(err, pyprogram.ErrNoEngine) {
		t.Fatalf("pyprogram.FindEngine took %q from the checkout: %v", p, err)
	}
	_, err := autoagent.New(context.Background(), autoagent.Config{
		LLM:      scriptFrom(t, writeScript(t)),
		Features: []autoagent.Feature{&sandbox.Sandbox{CodeMode: sandbox.CodeModeConfig{Mode: codemode.Only, Languages: []string{codemode.Python}}}},
	})
	if !errors.Is(err, pyprogram.ErrNoEngine) || !strings.Contains(err.Error(), pyprogram.EngineEnv) || strings.Contains(err.Error(), "not a WebAssembly module") {
		t.Fatalf("err %v; want ErrNoEngine naming %s, the checkout's file untouched", err, pyprogram.EngineEnv)
	}
	_, err = autoagent.New(context.Background(), autoagent.Config{
		LLM:      scriptFrom(t, writeScript(t)),
		Features: []autoagent.Feature{&sandbox.Sandbox{CodeMode: sandbox.CodeModeConfig{Mode: codemode.Only, Languages: []string{"ruby"}}}},
	})
	if !errors.Is(err, autoagent.ErrConfig) || !strings.Contains(err.Error(), `"ruby": want "javascript" or "python"`) {
		t.Fatalf("a language not offered: %v", err)
	}
}
