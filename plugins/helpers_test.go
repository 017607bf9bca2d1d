package plugins_test

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/autoagent-go/autoagent/host"
	"github.com/autoagent-go/autoagent/manifest"
	"github.com/autoagent-go/autoagent/tool"
)

// env is a host for one test, with its kv stores in a temporary directory.
type env struct {
	t *testing.T
	h *host.Host
}

func newEnv(t *testing.T) *env {
	t.Helper()
	h, err := host.New(context.Background(), host.Options{KVDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close(context.Background()) })
	return &env{t: t, h: h}
}

// load loads plugins/NAME.wasm with the given grants.
func (e *env) load(name string, config map[string]string, grants ...string) (*host.Loaded, error) {
	e.t.Helper()
	b, err := os.ReadFile(name + ".wasm")
	if err != nil {
		e.t.Fatalf("%v (run `make plugins`)", err)
	}
	gs, err := manifest.ParseGrants(grants)
	if err != nil {
		e.t.Fatal(err)
	}
	// Reuse: the tools keep no state between calls, and a fresh Go instance
	// per call would make this suite ten times slower under -race.
	l, err := e.h.Load(context.Background(), host.Module{Name: name, Bytes: b, Grants: gs, Config: config, Reuse: true})
	if err == nil {
		e.t.Cleanup(func() { l.Close(context.Background()) })
	}
	return l, err
}

func (e *env) mustLoad(name string, grants ...string) *host.Loaded {
	e.t.Helper()
	l, err := e.load(name, nil, grants...)
	if err != nil {
		e.t.Fatal(err)
	}
	return l
}

// call calls tool name of l with args (a JSON object).
func call(t *testing.T, l *host.Loaded, name, args string) tool.Result {
	t.Helper()
	tl, ok := l.Tool(name)
	if !ok {
		t.Fatalf("module %s has no tool %s", l.Name(), name)
	}
	res, err := tl.Call(context.Background(), tool.Call{Name: name, Arguments: json.RawMessage(args)})
	if err != nil {
		t.Fatalf("%s(%s): %v", name, args, err)
	}
	return res
}

// ok calls and wants a successful result.
func ok(t *testing.T, l *host.Loaded, name, args string) tool.Result {
	t.Helper()
	res := call(t, l, name, args)
	if res.IsError {
		t.Fatalf("%s(%s) failed: %s", name, args, res.Text())
	}
	return res
}

// fails calls and wants an error result mentioning every one of want.
func fails(t *testing.T, l *host.Loaded, name, args string, want ...string) {
	t.Helper()
	res := call(t, l, name, args)
	if !res.IsError {
		t.Fatalf("%s(%s) = %s, want an error", name, args, res.Text())
	}
	for _, w := range want {
		if !strings.Contains(res.Text(), w) {
			t.Errorf("%s(%s) error %q does not mention %q", name, args, res.Text(), w)
		}
	}
}

// structured decodes a result's structured content into v.
func structured(t *testing.T, res tool.Result, v any) {
	t.Helper()
	if err := json.Unmarshal(res.StructuredContent, v); err != nil {
		t.Fatalf("structured content %s: %v", res.StructuredContent, err)
	}
}
