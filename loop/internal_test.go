package loop

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/autoagent-go/autoagent/llm"
)

func FuzzTruncateMiddle(f *testing.F) {
	f.Add("hello world", 5)
	f.Add(strings.Repeat("é", 5000), 200)
	f.Add(strings.Repeat("x", 99999), 150)
	f.Fuzz(func(t *testing.T, s string, max int) {
		if max > 1<<20 || max < -10 || !utf8.ValidString(s) {
			return
		}
		got, cut := truncateMiddle(s, max)
		n := utf8.RuneCountInString(s)
		if max <= 0 || n <= max {
			if cut || got != s {
				t.Fatalf("changed a result within the bound")
			}
			return
		}
		if !cut {
			t.Fatal("not cut")
		}
		if m := utf8.RuneCountInString(got); m > max {
			t.Fatalf("%d characters > bound %d", m, max)
		}
		if !utf8.ValidString(got) {
			t.Fatal("invalid UTF-8")
		}
		if i := strings.Index(got, "\n[TRUNCATED — "); i >= 0 {
			// The marker states exactly how much is missing.
			end := strings.Index(got, "one portion at a time.]\n") + len("one portion at a time.]\n")
			marker := got[i:end]
			kept := utf8.RuneCountInString(got) - utf8.RuneCountInString(marker)
			if marker != truncationMarker(n-kept, n) {
				t.Fatalf("marker %q does not say %d of %d were omitted", marker, n-kept, n)
			}
			if !strings.HasPrefix(s, got[:i]) {
				t.Fatal("head is not a prefix")
			}
		} else if !strings.HasPrefix(s, got) {
			t.Fatal("hard cut is not a prefix")
		}
	})
}

func TestPruneViewLeavesShortAndPrunedResults(t *testing.T) {
	long := strings.Repeat("x", 1000)
	msgs := []llm.Message{
		llm.UserText("go"),
		llm.ToolResultMessage(llm.ToolResult{CallID: "1", Name: "a", Content: "short"}),
		llm.ToolResultMessage(llm.ToolResult{CallID: "2", Name: "b", Content: long, IsError: true}),
		llm.ToolResultMessage(llm.ToolResult{CallID: "3", Name: "c", Content: long}),
	}
	view, pruned, saved := pruneView(msgs, 1, 1)
	if pruned != 1 || saved <= 0 {
		t.Fatalf("pruned %d saved %d", pruned, saved)
	}
	if view[1].ToolResults()[0].Content != "short" {
		t.Error("a result shorter than its note was pruned")
	}
	if got := view[2].ToolResults()[0].Content; !strings.Contains(got, "That call had FAILED") {
		t.Errorf("error note = %q", got)
	}
	if msgs[2].ToolResults()[0].Content != long {
		t.Fatal("pruneView modified the transcript")
	}
	if v, p, _ := pruneView(view, 1, 1); p != 0 || &v[0] != &view[0] {
		t.Error("already-pruned results were pruned again")
	}
	// What a result quotes does not make it a note (issue 38: a result
	// holding "[PRUNED — " stayed in the context for good).
	for _, forged := range []string{long + prunedPrefix, prunedPrefix + long} {
		msgs := []llm.Message{
			llm.ToolResultMessage(llm.ToolResult{CallID: "1", Name: "a", Content: forged}),
			llm.ToolResultMessage(llm.ToolResult{CallID: "2", Name: "b", Content: "short"}),
		}
		if _, p, _ := pruneView(msgs, 1, 1); p != 1 {
			t.Errorf("a result quoting a note's opening was kept (%.20q…)", forged)
		}
	}
}

func TestCallIDsFix(t *testing.T) {
	var ids callIDs
	ids.seed([]llm.Message{{Role: llm.RoleAssistant, Parts: []llm.Part{llm.ToolCallPart(llm.ToolCall{ID: "call_3_1", Name: "x"})}}})
	msg := llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{
		llm.TextPart("thinking"),
		llm.ToolCallPart(llm.ToolCall{Name: "x"}),
		llm.ToolCallPart(llm.ToolCall{ID: "same", Name: "x"}),
		llm.ToolCallPart(llm.ToolCall{ID: "same", Name: "x"}),
	}}
	got := ids.fix(msg, 3)
	var out []string
	for _, c := range got.ToolCalls() {
		out = append(out, c.ID)
	}
	if fmt.Sprint(out) != "[call_3_1_2 same call_3_3]" {
		t.Fatalf("ids = %v", out)
	}
	if msg.Parts[1].ToolCall.ID != "" {
		t.Error("fix modified the provider's message")
	}
}
