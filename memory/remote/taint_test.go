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
