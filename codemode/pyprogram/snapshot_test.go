package pyprogram_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/autoagent-go/autoagent/codemode"
	"github.com/autoagent-go/autoagent/codemode/pyprogram"
	"github.com/autoagent-go/autoagent/host"
	"github.com/autoagent-go/autoagent/internal/pyenginetest"
	"github.com/autoagent-go/autoagent/internal/syncbuf"
	"github.com/autoagent-go/autoagent/loop"
)

// TestProgramFromSnapshotIsDeterministic: a deterministic module's
// instances may start from the host's snapshot (its fake clock and
// generator resumed where the start-up left them), and a Python program
// run in the instance that ran the start-up and then in fresh ones (no
// pool: each made on the call's path) makes the same calls and returns
// the same result either way.
func TestProgramFromSnapshotIsDeterministic(t *testing.T) {
	path := pyenginetest.Path(t)
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
	r, err := pyprogram.New(ctx, h, pyprogram.Options{Engine: path})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close(ctx) })
	p := codemode.Program{Language: "python", Code: `import time, random, datetime, os
return [time.time(), random.random(), random.random(), datetime.datetime.now().isoformat(), list({"b", "a", "c", "d"}), os.urandom(4).hex()]`}
	var outs []string
	for range 3 {
		res, err := r.Run(ctx, p)
		if err != nil || res.IsError {
			t.Fatalf("run: %v %s", err, res.Text())
		}
		outs = append(outs, res.Text())
	}
	if outs[1] != outs[0] || outs[2] != outs[0] || !strings.Contains(outs[0], "2022-01-01T") {
		t.Fatalf("three runs gave %q\nthe host logged:\n%s", outs, logs.String())
	}
	if !strings.Contains(logs.String(), "snapshot taken") {
		t.Fatalf("the engine got no snapshot; the host logged:\n%s", logs.String())
	}
}
