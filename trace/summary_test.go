package trace

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// writeRun emits a small two-run trace the way the loop does.
func writeRun(t *testing.T) *bytes.Buffer {
	t.Helper()
	var buf bytes.Buffer
	tr := New(JSONL(&buf))
	run := tr.Emit(Event{Type: RunStart, RunID: "a"})
	llm := tr.Emit(Event{Type: LLMRequest, ParentID: run, RunID: "a", Payload: Payload{Step: 1}})
	tr.Emit(Event{Type: LLMResponse, ParentID: llm, RunID: "a", Payload: Payload{Step: 1, InputTokens: 100, OutputTokens: 10, CachedTokens: 40, DurationMS: 5}})
	for i, args := range []string{`{"q":"x"}`, `{"q":"x"}`, `{"q":"y"}`} {
		s := tr.Emit(Event{Type: ToolCallStart, ParentID: llm, RunID: "a", Payload: Payload{Name: "search", Arguments: args}})
		status := "ok"
		if i == 2 {
			status = "error"
		}
		tr.Emit(Event{Type: ToolCallEnd, ParentID: s, RunID: "a", Payload: Payload{Name: "search", Status: status, DurationMS: float64(2 * (i + 1))}})
	}
	tr.Emit(Event{Type: LoopGuardBlock, ParentID: llm, RunID: "a", Payload: Payload{Name: "search"}})
	tr.Emit(Event{Type: TrifectaWouldBlock, ParentID: llm, RunID: "a"})
	s := tr.Emit(Event{Type: ToolCallStart, ParentID: llm, RunID: "a", Payload: Payload{Name: "fetch"}})
	tr.Emit(Event{Type: ToolCallEnd, ParentID: s, RunID: "a", Payload: Payload{Name: "fetch", Status: "error", Infrastructure: true, DurationMS: 7}})
	tr.Emit(Event{Type: RunEnd, ParentID: run, RunID: "a", Payload: Payload{Status: "ok", Steps: 2}})
	run2 := tr.Emit(Event{Type: RunStart, RunID: "b"})
	llm2 := tr.Emit(Event{Type: LLMRequest, ParentID: run2, RunID: "b"})
	s2 := tr.Emit(Event{Type: ToolCallStart, ParentID: llm2, RunID: "b", Payload: Payload{Name: "search", Arguments: `{"q":"x"}`}})
	tr.Emit(Event{Type: ToolCallEnd, ParentID: s2, RunID: "b", Payload: Payload{Name: "search", Status: "ok", DurationMS: 1}})
	tr.Emit(Event{Type: PolicyDeny, ParentID: llm2, RunID: "b"})
	tr.Emit(Event{Type: ApprovalRequired, ParentID: llm2, RunID: "b"})
	tr.Emit(Event{Type: RunEnd, ParentID: run2, RunID: "b", Payload: Payload{Status: "approval_required", Steps: 1}})
	return &buf
}

func TestSummarize(t *testing.T) {
	buf := writeRun(t)
	buf.WriteString("{\"type\":\"run_st") // a line cut by a crash
	s, err := Summarize(buf)
	if err != nil {
		t.Fatal(err)
	}
	want := &Summary{
		Events: 21, Runs: 2, RunsByStatus: map[string]int{"ok": 1, "approval_required": 1}, Steps: 3,
		LLMCalls: 2, LLMMillis: 5,
		ToolCalls: 5, ToolErrors: 2, InfraErrors: 1,
		Tools: []ToolStats{
			{Name: "fetch", Calls: 1, Errors: 1, InfraErrors: 1, TotalMillis: 7, MaxMillis: 7},
			{Name: "search", Calls: 4, Errors: 1, TotalMillis: 13, MaxMillis: 6},
		},
		RedundantToolCalls: 1, // the second {"q":"x"} in run a; run b's is its first
		Refusals:           map[string]int{"loop_guard_block": 1, "tool_policy_deny": 1},
		WouldBlock:         1, Approvals: 1,
		InputTokens: 100, OutputTokens: 10, CachedTokens: 40, TokensReported: true,
		BadLines: []int{22}, BadLineCount: 1,
	}
	if diff := cmp.Diff(want, s); diff != "" {
		t.Fatalf("summary (-want +got):\n%s", diff)
	}
	text := s.String()
	for _, w := range []string{"runs: 2 (approval_required 1, ok 1)", "tokens: 100 in (40 cached), 10 out, 110 total", "tool calls: 5 (2 errors, 1 infrastructure, 1 redundant)", "search", "refusals: 2", "warning: 1 line(s)"} {
		if !strings.Contains(text, w) {
			t.Errorf("text lacks %q:\n%s", w, text)
		}
	}
}

func TestSummarizeWithoutUsageSaysSo(t *testing.T) {
	var buf bytes.Buffer
	tr := New(JSONL(&buf))
	tr.Emit(Event{Type: LLMResponse})
	s, err := Summarize(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if s.TokensReported || !strings.Contains(s.String(), "tokens: not reported") {
		t.Errorf("unreported usage shown as zero: %s", s)
	}
}

func TestSummarizeCountsEarlyStarts(t *testing.T) {
	var buf bytes.Buffer
	tr := New(JSONL(&buf))
	run := tr.Emit(Event{Type: RunStart, RunID: "a"})
	llm := tr.Emit(Event{Type: LLMRequest, ParentID: run, RunID: "a", Payload: Payload{Step: 1}})
	for _, id := range []string{"c1", "c2"} {
		tr.Emit(Event{Type: ToolCallEarlyStart, ParentID: llm, RunID: "a", Payload: Payload{Step: 1, Name: "lookup", CallID: id}})
		s := tr.Emit(Event{Type: ToolCallStart, ParentID: llm, RunID: "a", Payload: Payload{Name: "lookup", CallID: id}})
		tr.Emit(Event{Type: ToolCallEnd, ParentID: s, RunID: "a", Payload: Payload{Name: "lookup", Status: "ok"}})
	}
	tr.Emit(Event{Type: ToolCallEarlyDiscarded, ParentID: llm, RunID: "a", Payload: Payload{Step: 1, Name: "lookup", CallID: "c2", Reason: "not in the final answer"}})
	tr.Emit(Event{Type: RunEnd, ParentID: run, RunID: "a", Payload: Payload{Status: "ok", Steps: 1, EarlyToolCalls: 1}})
	if !strings.Contains(buf.String(), `"early_tool_calls":1`) {
		t.Errorf("run_end lacks early_tool_calls:\n%s", buf.String())
	}
	s, err := Summarize(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if s.EarlyStarts != 2 || s.EarlyDiscarded != 1 || s.ToolCalls != 2 {
		t.Fatalf("early starts %d, discarded %d, tool calls %d; want 2, 1, 2", s.EarlyStarts, s.EarlyDiscarded, s.ToolCalls)
	}
	if text := s.String(); !strings.Contains(text, "started early: 2 (1 discarded)") {
		t.Errorf("text lacks the early starts:\n%s", text)
	}
}
