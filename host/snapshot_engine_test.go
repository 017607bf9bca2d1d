package host

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"testing"

	"github.com/autoagent-go/autoagent/internal/enginetest"
)

// TestSnapshotEngineHoldsNoCallerData: the JavaScript engine, which
// declares shared seeds, starts from a snapshot taken before its first
// call's input arrived: none of three callers' secrets is in it (its
// memory or its kernel's), though each call had them in its arguments and
// result. The engine's compiled code comes from the user cache, which
// `make synth-engine` fills, as the synth tests' does.
func TestSnapshotEngineHoldsNoCallerData(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(enginetest.Path(t, "jsengine.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	h, err := New(ctx, Options{PoolSize: -1, KVDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close(ctx) })
	l, err := h.Load(ctx, Module{
		Name: "js", Bytes: b,
		Sidecar: []byte(`{"tools":[{"name":"keep","description":"returns the secret","inputSchema":{"type":"object"}}]}`),
		Config:  map[string]string{"script": `function run(a) { globalThis.kept = a.secret; return { secret: a.secret } }`},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close(ctx) })
	var secrets []string
	for i := range 3 {
		secret := fmt.Sprintf("engine-caller-secret-%d-%x", i, i*7919+104729)
		secrets = append(secrets, secret)
		args, _ := json.Marshal(map[string]string{"secret": secret})
		res := call(t, l, "keep", string(args))
		if res.IsError || string(res.StructuredContent) != `{"secret":"`+secret+`"}` {
			t.Fatalf("call %d: %+v", i, res)
		}
	}
	snap := snapshotOf(t, l)
	for _, s := range secrets {
		if snap.holds(s) {
			t.Errorf("the engine's snapshot holds the caller's %q", s)
		}
	}
}
