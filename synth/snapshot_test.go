package synth

import (
	"context"
	"encoding/json"
	"log/slog"
	"testing"

	"github.com/autoagent-go/autoagent/host"
	"github.com/autoagent-go/autoagent/internal/syncbuf"
	"github.com/autoagent-go/autoagent/providers/scripted"
	"github.com/autoagent-go/autoagent/tool"
)

// TestJavaScriptToolFromSnapshotDrawsItsOwnRandomness: a JavaScript tool's
// instances start from the host's snapshot of the engine (its start-up
// is not run again), and each still draws its own Math.random sequence:
// the probe's call runs in the instance that ran the start-up, every tool
// call in a fresh instance restored from its snapshot (no pool: each made
// on the call's path).
func TestJavaScriptToolFromSnapshotDrawsItsOwnRandomness(t *testing.T) {
	ctx := context.Background()
	var logs syncbuf.Buffer
	h, err := host.New(ctx, host.Options{
		PoolSize: -1,
		Logger:   slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close(ctx) })
	const src = `function run() { return { r: [Math.random(), Math.random(), Math.random()] } }`
	b := newBuilder(t, scripted.New(turn(draft{Name: "dice", Description: "Draws numbers.", Source: src})), func(o *Options) {
		o.Host, o.NoStaging = h, true
	})
	tl, err := b.Build(ctx, Request{Capability: "draw numbers"})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for i := range 4 {
		res, err := tl.Call(ctx, tool.Call{Name: "dice", Arguments: json.RawMessage(`{}`)})
		if err != nil || res.IsError {
			t.Fatalf("call %d: %v %s", i, err, res.Text())
		}
		var out struct{ R []float64 }
		if err := json.Unmarshal(res.StructuredContent, &out); err != nil || len(out.R) != 3 {
			t.Fatalf("call %d returned %s", i, res.StructuredContent)
		}
		for _, x := range out.R {
			seen[formatFloat(x)]++
		}
	}
	for x, n := range seen {
		if n > 1 {
			t.Errorf("Math.random gave %s %d times in 4 fresh instances: they share a generator", x, n)
		}
	}
	if !logs.HasLine("snapshot taken", "module=dice") {
		t.Fatalf("the tool's engine got no snapshot; the host logged:\n%s", logs.String())
	}
}

func formatFloat(x float64) string {
	b, _ := json.Marshal(x)
	return string(b)
}
