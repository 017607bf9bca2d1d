package memory_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/memory"
)

// gatedModel answers extraction calls only when released.
func gatedModel(release <-chan struct{}, answers ...string) *fakeModel {
	i := 0
	m := &fakeModel{}
	m.fn = func(req *llm.Request) (*llm.Response, error) {
		<-release
		m.mu.Lock()
		a := answers[min(i, len(answers)-1)]
		i++
		m.mu.Unlock()
		if a == "ERR" {
			return nil, &llm.ProviderError{Status: 502, Message: "bad gateway", Retryable: true}
		}
		return answer(a, 200, 20), nil
	}
	return m
}

func TestFactBackgroundConsolidation(t *testing.T) {
	ctx := context.Background()
	release := make(chan struct{})
	m := gatedModel(release, "ERR", `{"operations":[{"op":"add","fact":"Rent is 743 euros."}]}`)
	f := newFact(t, m, memory.FactOptions{Background: true})
	msgs := session("My rent is 743 euros.", "Noted.")

	// Compact returns at once (the model is blocked) with nothing dropped.
	out, usage, err := f.Compact(ctx, msgs)
	if err != nil || usage != nil || len(out) != len(msgs) {
		t.Fatalf("background Compact = %d messages, %v, %v; want all %d at once", len(out), usage, err, len(msgs))
	}
	// A second Compact while the job runs starts no other job.
	if out, _, _ := f.Compact(ctx, msgs); len(out) != len(msgs) {
		t.Fatalf("second Compact dropped messages before facts were stored")
	}
	close(release)
	if err := f.Flush(ctx); err == nil || !strings.Contains(err.Error(), "bad gateway") || !errors.Is(err, memory.ErrExtractionFailed) {
		t.Fatalf("Flush after a failed job = %v", err)
	}
	if err := f.Flush(ctx); err != nil {
		t.Fatalf("errors are reported once: %v", err)
	}
	// The failed slice is retried; the usage of the failed job is reported.
	// (The retried job may already have stored its fact when Compact
	// renders the facts message; no conversation message is dropped
	// either way.)
	out, usage, err = f.Compact(ctx, msgs)
	if err != nil || nonSystem(out) != nonSystem(msgs) {
		t.Fatalf("retry Compact = %q, %v; want every conversation message", texts(out), err)
	}
	if usage != nil {
		t.Errorf("a failed call that reported no usage produced usage %+v", usage)
	}
	if err := f.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if got := currentTexts(f); len(got) != 1 {
		t.Fatalf("facts after the job = %q", got)
	}
	// The next Compact adopts the fold without a model call.
	calls := len(m.requests())
	out, usage, err = f.Compact(ctx, msgs)
	if err != nil || len(m.requests()) != calls {
		t.Fatalf("adoption made a call or failed: %v", err)
	}
	if usage == nil || usage.TotalTokens != 220 {
		t.Errorf("usage of the background job = %+v, want 220 reported once", usage)
	}
	if len(out) != 4 || !strings.Contains(out[1].Text(), "Rent is 743 euros.") {
		t.Errorf("adopted fold = %q", texts(out))
	}
	// A different conversation of the same length is not folded by it.
	other := session("I like tea.", "OK.")
	if out, _, _ := f.Compact(ctx, other); len(out) != len(other)+1 {
		t.Errorf("another conversation was cut by this fold: %q", texts(out))
	}
	_ = f.Flush(ctx)
}

// blockingModel blocks every call until its context ends.
type blockingModel struct {
	fakeModel
	started chan struct{}
}

func (b *blockingModel) Complete(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	close(b.started)
	<-ctx.Done()
	return nil, ctx.Err()
}

func TestFactCloseCancelsBackgroundJob(t *testing.T) {
	ctx := context.Background()
	m := &blockingModel{started: make(chan struct{})}
	f := newFact(t, m, memory.FactOptions{Background: true})
	msgs := session("My door code is B4729.", "Noted.")
	if out, _, _ := f.Compact(ctx, msgs); len(out) != len(msgs) {
		t.Fatal("messages dropped")
	}
	<-m.started
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if len(f.Facts(true)) != 0 {
		t.Error("a cancelled job stored facts")
	}
	// Nothing is left running after Close.
	tctx, cancel := context.WithTimeout(ctx, 0)
	defer cancel()
	if err := f.Flush(tctx); err != nil {
		t.Errorf("Flush after Close = %v, want nil (nothing running)", err)
	}
}

func nonSystem(msgs []llm.Message) int {
	n := 0
	for _, m := range msgs {
		if m.Role != llm.RoleSystem {
			n++
		}
	}
	return n
}
