package host

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"
)

// countingHandler counts the records it is given, by message, at every
// level.
type countingHandler struct {
	mu    sync.Mutex
	count map[string]int
}

func (h *countingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *countingHandler) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.count[r.Message]++
	return nil
}
func (h *countingHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *countingHandler) WithGroup(string) slog.Handler      { return h }

// TestNotificationsCountAgainstTheLogs: hyper-mcp's notify_progress and
// notify_resource_updated need no grant and are logged at debug level;
// they count against a call's 1000 logs as log_* does. A module sending
// them in a loop once wrote 1.7 GB of log lines in one 10 s call.
func TestNotificationsCountAgainstTheLogs(t *testing.T) {
	t.Parallel()
	lh := &countingHandler{count: map[string]int{}}
	h, _ := newTestHost(t, Options{Logger: slog.New(lh)})
	l := load(t, h, "notifyflood.wasm", Module{})
	for range 2 { // the count is per call: the second call logs as many
		if res := call(t, l, "notifyflood", `{}`); res.IsError {
			t.Fatalf("the call failed: %+v", res)
		}
	}
	lh.mu.Lock()
	defer lh.mu.Unlock()
	got := lh.count["notification: progress"] + lh.count["notification: resource updated"]
	if got != 2*maxLogsPerCall || lh.count["notification: progress"] != 2*500 {
		t.Fatalf("%d notifications logged (%v) by two calls that sent 6000 each, want %d, half of them progress", got, lh.count, 2*maxLogsPerCall)
	}
}

// TestListRereadEndsByTheCallsDeadline: a stateful module's re-read of
// its lists after a call that said they changed is part of that call and
// ends by its deadline. relist.wasm's call spins 1.5 s of its 2 s limit,
// then its describe spins forever: the call ends at 2 s with its result
// and the old lists stay. A re-read with a limit of its own ends 1.5 s +
// 2 s after the call started at the earliest, on any machine (a deadline
// is never early), so the bound below is that floor: it leaves 1.5 s for
// stopping the guest past the deadline, not a measure of speed.
func TestListRereadEndsByTheCallsDeadline(t *testing.T) {
	t.Parallel()
	lh := &countingHandler{count: map[string]int{}}
	h, rec := newTestHost(t, Options{Logger: slog.New(lh)})
	l := load(t, h, "relist.wasm", Module{Limits: Limits{Timeout: 2 * time.Second}})
	if res := call(t, l, "relist", `{}`); res.IsError {
		t.Fatalf("the call failed: %+v", res)
	}
	if d := rec.last(t).Duration; d >= 1500*time.Millisecond+2*time.Second {
		t.Errorf("the call and the re-read of its lists took %v: the re-read had a time limit of its own after the call's", d)
	}
	if _, ok := l.Tool("relist"); !ok {
		t.Error("the old lists are gone")
	}
	lh.mu.Lock()
	defer lh.mu.Unlock()
	if lh.count["the module said its tools changed, but reading them again failed: the old ones stay"] != 1 {
		t.Errorf("logged %v, want the failed re-read reported once", lh.count)
	}
}
