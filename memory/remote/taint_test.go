package remote

import (
	"context"
	"fmt"
	"testing"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/memory"
)

// TestCompactTaintCrossesTheBoundary: a run's taint (memory.WithTaint)
// reaches the memory in the backend process, which frames the summary it
// makes of a conversation whose messages show no marker; without it the
// summary is plain. Our attack on the memory taint of issue 38.
func TestCompactTaintCrossesTheBoundary(t *testing.T) {
	m, _ := start(t, "summarizing", Options{})
	var msgs []llm.Message
	for i := range 7 {
		msgs = append(msgs, llm.UserText(fmt.Sprintf("question %d", i)), llm.AssistantText(fmt.Sprintf("answer %d", i)))
	}
	for _, tainted := range []bool{false, true} {
		ctx := context.Background()
		if tainted {
			ctx = memory.WithTaint(ctx)
		}
		out, _, err := m.Compact(ctx, msgs)
		if err != nil {
			t.Fatal(err)
		}
		if len(out) == 0 || out[0].Role != llm.RoleSystem {
			t.Fatalf("no summary: %d messages", len(out))
		}
		if got := memory.IsTainted(out[0]); got != tainted {
			t.Errorf("compacted with taint %v: the summary is tainted %v", tainted, got)
		}
	}
}

// A backend that does not say it keeps taint (an older build, which
// ignores the requests' taint) cannot launder it: what it compacts of a
// tainted run comes back framed, and so does everything it recalls; a
// backend that keeps taint recalls a clean fact unframed.
func TestABackendThatLosesTaintIsFramed(t *testing.T) {
	old, _ := start(t, "old-summarizing", Options{})
	var msgs []llm.Message
	for i := range 7 {
		msgs = append(msgs, llm.UserText(fmt.Sprintf("question %d", i)), llm.AssistantText(fmt.Sprintf("answer %d", i)))
	}
	for _, tainted := range []bool{false, true} {
		ctx := context.Background()
		if tainted {
			ctx = memory.WithTaint(ctx)
		}
		out, _, err := old.Compact(ctx, msgs)
		if err != nil {
			t.Fatal(err)
		}
		if len(out) < 2 || out[0].Role != llm.RoleSystem {
			t.Fatalf("no summary: %d messages", len(out))
		}
		if got := memory.IsTainted(out[0]); got != tainted {
			t.Errorf("compacted with taint %v by an older backend: the summary is tainted %v", tainted, got)
		}
		if memory.IsTainted(out[len(out)-1]) {
			t.Errorf("compacted with taint %v: a kept message of the transcript was framed: %q", tainted, out[len(out)-1].Text())
		}
	}
	for _, c := range []struct {
		mode   string
		framed bool
	}{{"old-fact-sqlite", true}, {"fact-sqlite", false}} {
		m, _ := start(t, c.mode, Options{})
		r, ok := m.(memory.Rememberer)
		if !ok {
			t.Fatalf("%s: not a Rememberer", c.mode)
		}
		if _, err := r.Remember(context.Background(), "the user prefers tea", "user", memory.SourceUser); err != nil {
			t.Fatal(err)
		}
		got, err := m.Recall(context.Background(), "tea", 3)
		if err != nil || len(got) == 0 {
			t.Fatalf("%s: recall %v %v", c.mode, got, err)
		}
		for _, g := range got {
			if memory.IsTainted(g) != c.framed {
				t.Errorf("%s: recalled %q framed %v; want %v", c.mode, g.Text(), memory.IsTainted(g), c.framed)
			}
		}
	}
}
