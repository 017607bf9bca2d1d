package remote

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/autoagent-go/autoagent/internal/testsys"

	"github.com/google/go-cmp/cmp"

	"github.com/autoagent-go/autoagent/internal/backend/backendtest"
	"github.com/autoagent-go/autoagent/llm"
)

func ask(text string) *llm.Request {
	return &llm.Request{Messages: []llm.Message{llm.SystemText("sys"), llm.UserText(text)}}
}

func TestCompleteCarriesEveryPartIntact(t *testing.T) {
	p, _ := startFake(t, Options{})
	temp := 0.25
	msg := llm.Message{Role: llm.RoleUser, Parts: []llm.Part{
		llm.TextPart("mirror"),
		llm.ImagePart("image/png", []byte{0x89, 'P', 'N', 'G', 0, 1, 2, 0xff}),
		{Type: llm.PartImage, Image: &llm.Image{URL: "https://example.com/cat.jpg"}},
		{Type: llm.PartReasoning, Text: "thinking… ünïcødé", Signature: "sig==", Redacted: "opaque"},
		llm.ToolCallPart(llm.ToolCall{ID: "c1", Name: "f", Arguments: json.RawMessage(`{"a":[1,2,{"b":null}]}`)}),
		{Type: llm.PartToolResult, ToolResult: &llm.ToolResult{CallID: "c1", Name: "f", Content: "ok\n\t\"quoted\"", IsError: true}},
	}}
	req := &llm.Request{Model: "m-1", Messages: []llm.Message{msg}, Temperature: &temp, MaxTokens: 9,
		Tools: []llm.ToolSpec{{Name: "f", Description: "d", InputSchema: json.RawMessage(`{"type":"object"}`)}}}
	resp, err := p.Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	// The mirror answers with the message it received: any loss on the way
	// there or back shows as a diff.
	if d := cmp.Diff(msg, resp.Message); d != "" {
		t.Errorf("message changed crossing the boundary (-sent +received):\n%s", d)
	}
	want := &llm.Response{Message: msg, Usage: testUsage, FinishReason: llm.FinishStop, Model: "m-1", ID: "resp_1"}
	if d := cmp.Diff(want, resp); d != "" {
		t.Errorf("response (-want +got):\n%s", d)
	}
	if p.Name() != "fake" {
		t.Errorf("Name() = %q, want the served provider's name", p.Name())
	}
}

func TestProviderErrorArrivesTyped(t *testing.T) {
	p, _ := startFake(t, Options{})
	check := func(t *testing.T, err error) {
		t.Helper()
		pe, ok := err.(*llm.ProviderError)
		if !ok {
			t.Fatalf("error is %T (%v), want *llm.ProviderError itself", err, err)
		}
		want := testProviderError()
		if pe.Provider != want.Provider || pe.Status != want.Status || pe.Code != want.Code ||
			pe.Message != want.Message || pe.Retryable != want.Retryable ||
			pe.RetryAfter != want.RetryAfter || pe.RequestID != want.RequestID {
			t.Errorf("got %+v\nwant %+v", pe, want)
		}
		if !llm.IsRetryable(err) {
			t.Error("IsRetryable = false")
		}
		if !errors.Is(err, llm.ErrIncompleteStream) {
			t.Error("the wrapped sentinel was lost")
		}
		if err.Error() != want.Error() {
			t.Errorf("message %q, want %q", err.Error(), want.Error())
		}
		var be *BackendError
		if errors.As(err, &be) {
			t.Error("a provider's own error must not look like a backend failure")
		}
	}
	t.Run("Complete", func(t *testing.T) {
		_, err := p.Complete(context.Background(), ask("fail"))
		check(t, err)
	})
	t.Run("Stream", func(t *testing.T) {
		var texts []string
		var last error
		for ev, err := range p.Stream(context.Background(), ask("fail")) {
			if err != nil {
				last = err
				continue
			}
			texts = append(texts, ev.Text)
		}
		if d := cmp.Diff([]string{"echo: "}, texts); d != "" {
			t.Errorf("events before the error (-want +got):\n%s", d)
		}
		check(t, last)
	})
}

func TestStreamYieldsEventsInOrder(t *testing.T) {
	p, _ := startFake(t, Options{})
	var got []llm.StreamEvent
	for ev, err := range p.Stream(context.Background(), ask("hello")) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ev)
	}
	call := llm.ToolCall{ID: "call_1", Name: "lookup", Arguments: json.RawMessage(`{"q":"x"}`)}
	want := []llm.StreamEvent{
		{Type: llm.StreamText, Text: "echo: "},
		{Type: llm.StreamText, Text: "hello"},
		{Type: llm.StreamToolCall, ToolCall: &call},
		{Type: llm.StreamDone, Response: &llm.Response{
			Message: llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{llm.TextPart("echo: hello"), llm.ToolCallPart(call)}},
			Usage:   testUsage, FinishReason: llm.FinishToolCalls}},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("events (-want +got):\n%s", d)
	}
}

func TestStreamWithoutDoneIsAnError(t *testing.T) {
	p, _ := startFake(t, Options{})
	var last error
	for _, err := range p.Stream(context.Background(), ask("truncated")) {
		last = err
	}
	if !errors.Is(last, llm.ErrIncompleteStream) || !errors.Is(last, ErrBackendProtocol) {
		t.Fatalf("got %v, want an incomplete-stream protocol error", last)
	}
}

func TestStreamStopStopsTheBackend(t *testing.T) {
	p, dir := startFake(t, Options{})
	for ev, err := range p.Stream(context.Background(), ask("block")) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Text != "echo: " {
			t.Fatalf("first event %+v", ev)
		}
		backendtest.WaitForMarker(t, dir, "started")
		break
	}
	// Leaving the loop must end the backend's stream: its context is
	// cancelled across the process boundary.
	backendtest.WaitForMarker(t, dir, "cancelled")
}

func TestCancelCrossesTheProcessBoundary(t *testing.T) {
	p, dir := startFake(t, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := p.Complete(ctx, ask("block"))
		errc <- err
	}()
	backendtest.WaitForMarker(t, dir, "started")
	cancel()
	err := <-errc
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	backendtest.WaitForMarker(t, dir, "cancelled")
	// The backend survived the cancellation and serves the next call.
	if _, err := p.Complete(context.Background(), ask("again")); err != nil {
		t.Fatal(err)
	}
}

func TestKill9MidCall(t *testing.T) {
	for _, streaming := range []bool{false, true} {
		name := "Complete"
		if streaming {
			name = "Stream"
		}
		t.Run(name, func(t *testing.T) {
			p, dir := startFake(t, Options{Name: "victim"})
			pid := p.pid()
			errc := make(chan error, 1)
			go func() {
				if streaming {
					for _, err := range p.Stream(context.Background(), ask("block")) {
						if err != nil {
							errc <- err
							return
						}
					}
					errc <- nil
					return
				}
				_, err := p.Complete(context.Background(), ask("block"))
				errc <- err
			}()
			backendtest.WaitForMarker(t, dir, "started")
			if err := testsys.Kill(pid); err != nil {
				t.Fatal(err)
			}
			err := <-errc
			var be *BackendError
			if !errors.As(err, &be) || be.Backend != "victim" || be.Kind != "provider" {
				t.Fatalf("got %T %v, want a *BackendError naming the backend", err, err)
			}
			if !errors.Is(err, ErrBackendCrashed) {
				t.Fatalf("got %v, want ErrBackendCrashed", err)
			}
			if !strings.Contains(err.Error(), "signal: killed") {
				t.Errorf("error %q does not say how the backend died", err)
			}
			backendtest.AssertReaped(t, pid)
			resp, err := p.Complete(context.Background(), ask("after"))
			if err != nil {
				t.Fatalf("call after the crash: %v", err)
			}
			if resp.Message.Text() != "echo: after" {
				t.Errorf("after restart: %q", resp.Message.Text())
			}
			if np := p.pid(); np == pid || np == 0 {
				t.Errorf("pid after restart = %d, old %d", np, pid)
			}
		})
	}
}

func TestPanicIsACrashQuotingStderr(t *testing.T) {
	p, _ := startFake(t, Options{})
	pid := p.pid()
	_, err := p.Complete(context.Background(), ask("panic"))
	if !errors.Is(err, ErrBackendCrashed) {
		t.Fatalf("got %v, want ErrBackendCrashed", err)
	}
	if !strings.Contains(err.Error(), "panic: fake backend: boom") {
		t.Errorf("error does not quote the backend's panic: %v", err)
	}
	backendtest.AssertReaped(t, pid)
	if _, err := p.Complete(context.Background(), ask("after")); err != nil {
		t.Fatal(err)
	}
}

func TestHungBackendIsBoundedByContextAndReplaced(t *testing.T) {
	p, _ := startFake(t, Options{HealthTimeout: 200 * time.Millisecond})
	pid := p.pid()
	// A stopped process accepts connections in the kernel but never
	// answers: the worst kind of hang.
	if err := testsys.Stop(pid); err != nil {
		t.Fatal(err)
	}
	backendtest.WaitStopped(t, pid)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err := p.Complete(ctx, ask("hello"))
	var be *BackendError
	if !errors.As(err, &be) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want a *BackendError wrapping context.DeadlineExceeded", err)
	}
	// The next call health-checks the process, kills it and starts another.
	resp, err := p.Complete(context.Background(), ask("alive"))
	if err != nil {
		t.Fatalf("call after the hang: %v", err)
	}
	if resp.Message.Text() != "echo: alive" {
		t.Errorf("got %q", resp.Message.Text())
	}
	backendtest.AssertReaped(t, pid)
}

func TestCloseStopsCallsAndReapsTheChild(t *testing.T) {
	p, dir := startFake(t, Options{})
	pid := p.pid()
	errc := make(chan error, 1)
	go func() {
		_, err := p.Complete(context.Background(), ask("block"))
		errc <- err
	}()
	backendtest.WaitForMarker(t, dir, "started")
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; !errors.Is(err, ErrClosed) && !errors.Is(err, ErrBackendCrashed) {
		t.Errorf("call in flight at Close: %v", err)
	}
	backendtest.AssertReaped(t, pid)
	if _, err := p.Complete(context.Background(), ask("x")); !errors.Is(err, ErrClosed) {
		t.Errorf("call after Close: %v, want ErrClosed", err)
	}
	if err := p.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestHostEnvironmentIsNotInherited(t *testing.T) {
	t.Setenv("AUTOAGENT_TEST_HOST_SECRET", "s3cr3t")
	env := func(opts Options) string {
		p, _ := startFake(t, opts)
		resp, err := p.Complete(context.Background(), ask("env"))
		if err != nil {
			t.Fatal(err)
		}
		return resp.Message.Text()
	}
	if got := env(Options{Env: []string{"GIVEN=1"}}); strings.Contains(got, "s3cr3t") || !strings.Contains(got, "GIVEN=1") {
		t.Errorf("default environment leaks the host's or lacks Env:\n%s", got)
	}
	if got := env(Options{InheritEnv: true}); !strings.Contains(got, "AUTOAGENT_TEST_HOST_SECRET=s3cr3t") {
		t.Errorf("InheritEnv did not pass the host environment")
	}
}

func TestStartFailures(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "autoagent-provider-liar")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho 'liar: oops' >&2\necho 'not a handshake'\nexit 4\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		opts Options
		want []string
	}{
		{"not a backend", Options{Dir: dir, Name: "liar"}, []string{"liar: oops"}},
		{"missing", Options{Dir: dir, Name: "nope"}, []string{"autoagent-provider-nope", "liar"}},
		{"future protocol only", Options{Path: os.Args[0], Env: []string{testBackendEnv + "=v2only"}}, []string{"version", "2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			tt.opts.StartTimeout = 5 * time.Second
			p, err := New(ctx, tt.opts)
			if err == nil {
				p.Close()
				t.Fatal("New succeeded")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

func TestBackendRunByHandRefuses(t *testing.T) {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), testBackendEnv+"=fake")
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("exit: %v (output %q)", err, out)
	}
	if !strings.Contains(string(out), "plugin") {
		t.Errorf("no explanation printed: %q", out)
	}
}

func TestConcurrentCalls(t *testing.T) {
	p, _ := startFake(t, Options{})
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 8 {
				want := "echo: " + strings.Repeat("x", i*8+j)
				if (i+j)%2 == 0 {
					resp, err := p.Complete(context.Background(), ask(strings.Repeat("x", i*8+j)))
					if err != nil {
						errs <- err
						return
					}
					if resp.Message.Text() != want {
						errs <- errors.New("crossed answers: " + resp.Message.Text())
						return
					}
					continue
				}
				var text strings.Builder
				for ev, err := range p.Stream(context.Background(), ask(strings.Repeat("x", i*8+j))) {
					if err != nil {
						errs <- err
						return
					}
					text.WriteString(ev.Text)
				}
				if text.String() != want {
					errs <- errors.New("crossed stream: " + text.String())
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestHangBeforeHandshakeIsBoundedByContext(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "autoagent-provider-mute")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nexec sleep 30\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	// New gives up when ctx ends: the start it abandons is cut short, not
	// waited for until StartTimeout.
	type result struct {
		p   *Provider
		err error
	}
	done := make(chan result, 1)
	go func() {
		p, err := New(ctx, Options{Path: script, StartTimeout: time.Hour})
		done <- result{p, err}
	}()
	var r result
	select {
	case r = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("New waited for the abandoned start (StartTimeout is an hour)")
	}
	p, err := r.p, r.err
	if err == nil {
		p.Close()
		t.Fatal("New succeeded")
	}
	var be *BackendError
	if !errors.As(err, &be) || !errors.Is(err, context.DeadlineExceeded) || be.Backend != "mute" {
		t.Fatalf("got %v, want a *BackendError for backend \"mute\" wrapping context.DeadlineExceeded", err)
	}
}
