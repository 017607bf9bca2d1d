package jsprogram_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/autoagent-go/autoagent/codemode"
	"github.com/autoagent-go/autoagent/codemode/jsprogram"
	"github.com/autoagent-go/autoagent/host"
	"github.com/autoagent-go/autoagent/internal/enginetest"
	"github.com/autoagent-go/autoagent/internal/syncbuf"
	"github.com/autoagent-go/autoagent/loop"
	"github.com/autoagent-go/autoagent/synth"
)

// TestProgramFromSnapshotIsDeterministic: code mode's engine starts each
// program from the host's snapshot of an instance whose initialisers
// ran, yet a program still sees the fixed clock and seeded generator
// exactly as in the instance that ran them: the first program runs there,
// the next ones in instances restored from the snapshot (no pool: each
// made on the call's path), and all make the same calls and return the
// same result.
func TestProgramFromSnapshotIsDeterministic(t *testing.T) {
	path := enginetest.Path(t, synth.BridgeEngineFile)
	ctx := context.Background()
	var logs syncbuf.Buffer
	h, err := host.New(ctx, host.Options{
		CallTool: loop.CallNested, PoolSize: -1,
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close(ctx) })
	r, err := jsprogram.New(ctx, h, jsprogram.Options{Engine: path})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close(ctx) })
	p := codemode.Program{Code: `return [Date.now(), Math.random(), Math.random(), new Date().toISOString()]`}
	var outs []string
	for range 3 {
		res, err := r.Run(ctx, p)
		if err != nil || res.IsError {
			t.Fatalf("run: %v %s", err, res.Text())
		}
		outs = append(outs, res.Text())
	}
	if outs[1] != outs[0] || outs[2] != outs[0] || !strings.Contains(outs[0], "2022-01-01T") {
		t.Fatalf("three runs gave %q", outs)
	}
	if !logs.HasLine("snapshot taken", "module="+codemode.ToolName) {
		t.Fatalf("the engine got no snapshot; the host logged:\n%s", logs.String())
	}
}
