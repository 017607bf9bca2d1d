package remote

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autoagent-go/autoagent/internal/testsys"

	"github.com/google/go-cmp/cmp"

	"github.com/autoagent-go/autoagent/internal/backend/backendtest"
	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/memory"
	"github.com/autoagent-go/autoagent/memory/memorytest"
)

func TestConformance(t *testing.T) {
	for _, tt := range []struct {
		mode    string
		hardCap int
	}{
		{"buffer", 8}, {"summarizing", 0}, {"fact", 0}, {"fact-background", 0},
	} {
		t.Run(tt.mode, func(t *testing.T) {
			// Each check starts a backend process; overlap their starts.
			t.Parallel()
			memorytest.Run(t, memorytest.Options{
				HardCap: tt.hardCap,
				New: func(t *testing.T) memory.Memory {
					m, _ := start(t, tt.mode, Options{})
					return m
				},
			})
		})
	}
}

func TestOptionalInterfacesMatchTheServedMemory(t *testing.T) {
	for _, tt := range []struct {
		mode                      string
		remember, forget, flusher bool
	}{
		{"buffer", false, false, false},
		{"fact", true, true, true},
	} {
		m, _ := start(t, tt.mode, Options{})
		_, r := m.(memory.Rememberer)
		_, f := m.(memory.Forgetter)
		_, l := m.(memory.Flusher)
		if r != tt.remember || f != tt.forget || l != tt.flusher {
			t.Errorf("%s: Rememberer %v Forgetter %v Flusher %v; want %v %v %v", tt.mode, r, f, l, tt.remember, tt.forget, tt.flusher)
		}
	}
}

func TestFactOperationsAcrossTheBoundary(t *testing.T) {
	m, dir := start(t, "fact", Options{})
	ctx := context.Background()
	rem := m.(memory.Rememberer)
	rec, err := rem.Remember(ctx, "The user's daughter is called Ada.", "daughter", memory.SourceUser)
	if err != nil {
		t.Fatal(err)
	}
	if rec.ID == 0 || rec.Subject != "daughter" || rec.Source != memory.SourceUser || rec.ValidFrom.IsZero() {
		t.Errorf("record %+v", rec)
	}
	got, err := m.Recall(ctx, "daughter name", 3)
	if err != nil || len(got) != 1 || !strings.Contains(got[0].Text(), "Ada") {
		t.Fatalf("Recall = %v, %v", got, err)
	}
	if _, err := rem.Remember(ctx, "   ", "", memory.SourceHost); !errors.Is(err, memory.ErrEmptyFact) {
		t.Errorf("blank fact: %v, want memory.ErrEmptyFact", err)
	}
	fg := m.(memory.Forgetter)
	if _, err := fg.ForgetMatching(ctx, " ", true); !errors.Is(err, memory.ErrEmptyInstruction) {
		t.Errorf("blank instruction: %v, want memory.ErrEmptyInstruction", err)
	}
	found, err := fg.Forget(ctx, rec.ID)
	if err != nil || !found {
		t.Fatalf("Forget = %v, %v", found, err)
	}
	if found, _ := fg.Forget(ctx, rec.ID); found {
		t.Error("forgot the same fact twice")
	}
	// The backend's store is a real file: the erasure reached it.
	b, err := os.ReadFile(filepath.Join(dir, "facts.json"))
	if err != nil || strings.Contains(string(b), "Ada") {
		t.Errorf("store after Forget: %v %s", err, b)
	}
}

func TestCompactErrorsArriveTyped(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "facts.json"), []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The backend cannot open a corrupt store, so it cannot start either:
	// the start error says why, quoting its stderr.
	_, err := New(context.Background(), Options{Path: os.Args[0], Env: []string{testBackendEnv + "=fact", testDirEnv + "=" + dir}})
	if !errors.Is(err, ErrBackendStart) || !strings.Contains(err.Error(), "corrupt") {
		t.Fatalf("got %v, want a start error quoting the corrupt store", err)
	}
}

func TestCancelAndCrashOfAMemoryBackend(t *testing.T) {
	m, dir := start(t, "fact", Options{})
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := m.Recall(ctx, "block", 1)
		errc <- err
	}()
	backendtest.WaitForMarker(t, dir, "started")
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled Recall: %v", err)
	}
	backendtest.WaitForMarker(t, dir, "cancelled")

	if _, err := m.(memory.Rememberer).Remember(context.Background(), "Survives restarts.", "", ""); err != nil {
		t.Fatal(err)
	}
	pid := pidOf(m)
	os.Remove(filepath.Join(dir, "started"))
	go func() {
		_, err := m.Recall(context.Background(), "block", 1)
		errc <- err
	}()
	backendtest.WaitForMarker(t, dir, "started")
	if err := testsys.Kill(pid); err != nil {
		t.Fatal(err)
	}
	err := <-errc
	var be *BackendError
	if !errors.As(err, &be) || be.Backend != "fact" || !errors.Is(err, ErrBackendCrashed) {
		t.Fatalf("got %v, want a *BackendError wrapping ErrBackendCrashed", err)
	}
	backendtest.AssertReaped(t, pid)
	// The restarted backend reopens the same store.
	got, err := m.Recall(context.Background(), "restarts", 1)
	if err != nil || len(got) != 1 || !strings.Contains(got[0].Text(), "Survives restarts.") {
		t.Fatalf("Recall after restart = %v, %v", got, err)
	}
	if np := pidOf(m); np == pid {
		t.Error("same pid after the crash")
	}
	if _, err := m.Recall(context.Background(), "panic", 1); !errors.Is(err, ErrBackendCrashed) || !strings.Contains(err.Error(), "memory backend: boom") {
		t.Errorf("panicking backend: %v", err)
	}
}

func TestCompactRoundTrip(t *testing.T) {
	m, _ := start(t, "buffer", Options{})
	var msgs []llm.Message
	msgs = append(msgs, llm.SystemText("sys"))
	for i := range 12 {
		msgs = append(msgs, llm.UserText(strings.Repeat("u", i+1)), llm.AssistantText(strings.Repeat("a", i+1)))
	}
	in, _ := memory.NewBuffer(memory.BufferOptions{MaxMessages: 8})
	want, wantUsage, err := in.Compact(context.Background(), msgs)
	if err != nil {
		t.Fatal(err)
	}
	got, usage, err := m.Compact(context.Background(), msgs)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, got); d != "" || usage != wantUsage {
		t.Errorf("remote Compact differs from in-process (-want +got):\n%s", d)
	}
}
