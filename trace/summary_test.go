package trace

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func ptr[T any](v T) *T { return &v }

// A run's duration is from its run_start to its run_end; a run the trace
// cut short has no status and no duration; unreported usage leaves tokens
// per success unknown.
func TestSummarizePerRun(t *testing.T) {
	lines := `{"type":"run_start","span_id":"1","run_id":"r1","ts":"2026-12-01T10:00:00Z","payload":{}}
{"type":"llm_request","span_id":"2","parent_id":"1","run_id":"r1","ts":"2026-12-01T10:00:00.1Z","payload":{}}
{"type":"llm_response","span_id":"3","parent_id":"2","run_id":"r1","ts":"2026-12-01T10:00:01Z","payload":{}}
{"type":"run_end","span_id":"4","parent_id":"1","run_id":"r1","ts":"2026-12-01T10:00:02.5Z","payload":{"status":"ok","steps":1}}
{"type":"run_start","span_id":"5","run_id":"r2","ts":"2026-12-01T10:00:03Z","payload":{}}
`
	s, err := Summarize(strings.NewReader(lines))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.PerRun) != 2 || s.PerRun[0].DurationMS != 2500 || s.PerRun[1].Status != "" || s.PerRun[1].DurationMS != 0 {
		t.Fatalf("per run %+v", s.PerRun)
	}
	if s.Successes != 1 || s.TokensPerSuccess != nil || s.Ratios.SuccessRate == nil || *s.Ratios.SuccessRate != 1 || s.Ratios.TokensPerStep != nil {
		t.Errorf("successes %d, tokens per success %v, ratios %+v", s.Successes, s.TokensPerSuccess, s.Ratios)
	}
	if text := s.String(); !strings.Contains(text, "tokens per success: unknown") || !strings.Contains(text, "(no end)") || !strings.Contains(text, "2500.0") {
		t.Errorf("text:\n%s", text)
	}
}

// writeRun emits a small two-run trace the way the loop does.
func writeRun(t *testing.T) *bytes.Buffer {
	t.Helper()
	var buf bytes.Buffer
	tr := New(JSONL(&buf))
	run := tr.Emit(Event{Type: RunStart, RunID: "a"})
	llm := tr.Emit(Event{Type: LLMRequest, ParentID: run, RunID: "a", Payload: ModelCall{Step: 1}})
	tr.Emit(Event{Type: LLMResponse, ParentID: llm, RunID: "a", Payload: ModelCall{Step: 1, InputTokens: 100, OutputTokens: 10, CachedTokens: 40, DurationMS: 5}})
	for i, args := range []string{`{"q":"x"}`, `{"q":"x"}`, `{"q":"y"}`} {
		s := tr.Emit(Event{Type: ToolCallStart, ParentID: llm, RunID: "a", Payload: ToolCall{Name: "search", Arguments: args}})
		status := "ok"
		if i == 2 {
			status = "error"
		}
		tr.Emit(Event{Type: ToolCallEnd, ParentID: s, RunID: "a", Payload: ToolCall{Name: "search", Status: status, DurationMS: float64(2 * (i + 1))}})
	}
	tr.Emit(Event{Type: LoopGuardBlock, ParentID: llm, RunID: "a", Payload: Guard{Name: "search"}})
	tr.Emit(Event{Type: TrifectaWouldBlock, ParentID: llm, RunID: "a"})
	s := tr.Emit(Event{Type: ToolCallStart, ParentID: llm, RunID: "a", Payload: ToolCall{Name: "fetch"}})
	tr.Emit(Event{Type: ToolCallEnd, ParentID: s, RunID: "a", Payload: ToolCall{Name: "fetch", Status: "error", Infrastructure: true, DurationMS: 7}})
	tr.Emit(Event{Type: RunEnd, ParentID: run, RunID: "a", Payload: Run{Status: "ok", Steps: 2}})
	run2 := tr.Emit(Event{Type: RunStart, RunID: "b"})
	llm2 := tr.Emit(Event{Type: LLMRequest, ParentID: run2, RunID: "b"})
	s2 := tr.Emit(Event{Type: ToolCallStart, ParentID: llm2, RunID: "b", Payload: ToolCall{Name: "search", Arguments: `{"q":"x"}`}})
	tr.Emit(Event{Type: ToolCallEnd, ParentID: s2, RunID: "b", Payload: ToolCall{Name: "search", Status: "ok", DurationMS: 1}})
	tr.Emit(Event{Type: PolicyDeny, ParentID: llm2, RunID: "b"})
	tr.Emit(Event{Type: ApprovalRequired, ParentID: llm2, RunID: "b"})
	tr.Emit(Event{Type: RunEnd, ParentID: run2, RunID: "b", Payload: Run{Status: "approval_required", Steps: 1}})
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
		// Run a ended ok, b paused for approval.
		Successes: 1, TokensPerSuccess: ptr(110.0),
		Ratios: Ratios{SuccessRate: ptr(0.5), TokensPerStep: ptr(110.0 / 3), ToolCallsPerRun: ptr(2.5), ToolErrorRate: ptr(0.4),
			RedundantCallRate: ptr(0.2), CachedInputRate: ptr(0.4)},
		PerRun: []RunStats{
			{RunID: "a", Status: "ok", Steps: 2, LLMCalls: 1, ToolCalls: 4, ToolErrors: 2, Refusals: 1, InputTokens: 100, OutputTokens: 10, TokensReported: true},
			{RunID: "b", Status: "approval_required", Steps: 1, LLMCalls: 1, ToolCalls: 1, Refusals: 1},
		},
	}
	if diff := cmp.Diff(want, s, cmpopts.IgnoreFields(RunStats{}, "DurationMS"), cmpopts.IgnoreUnexported(RunStats{})); diff != "" {
		t.Fatalf("summary (-want +got):\n%s", diff)
	}
	text := s.String()
	for _, w := range []string{"runs: 2 (approval_required 1, ok 1)", "tokens: 100 in (40 cached), 10 out, 110 total", "tool calls: 5 (2 errors, 1 infrastructure, 1 redundant)", "search", "refusals: 2", "warning: 1 line(s)",
		"successes: 1 of 2 ended run(s)   tokens per success: 110.0",
		"ratios: success 50.0%   tokens/step 36.7   tool calls/run 2.50   tool errors 40.0%   redundant calls 20.0%   cached input 40.0%",
		"  a    ok                 2      1    4      2       1         110     "} {
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
	llm := tr.Emit(Event{Type: LLMRequest, ParentID: run, RunID: "a", Payload: ModelCall{Step: 1}})
	for _, id := range []string{"c1", "c2"} {
		tr.Emit(Event{Type: ToolCallEarlyStart, ParentID: llm, RunID: "a", Payload: ToolCall{Step: 1, Name: "lookup", CallID: id}})
		s := tr.Emit(Event{Type: ToolCallStart, ParentID: llm, RunID: "a", Payload: ToolCall{Name: "lookup", CallID: id}})
		tr.Emit(Event{Type: ToolCallEnd, ParentID: s, RunID: "a", Payload: ToolCall{Name: "lookup", Status: "ok"}})
	}
	tr.Emit(Event{Type: ToolCallEarlyDiscarded, ParentID: llm, RunID: "a", Payload: ToolCall{Step: 1, Name: "lookup", CallID: "c2", Reason: "not in the final answer"}})
	tr.Emit(Event{Type: RunEnd, ParentID: run, RunID: "a", Payload: Run{Status: "ok", Steps: 1, EarlyToolCalls: 1}})
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

func TestSummarizeCountsPrograms(t *testing.T) {
	var buf bytes.Buffer
	tr := New(JSONL(&buf))
	run := tr.Emit(Event{Type: RunStart, RunID: "a"})
	llm := tr.Emit(Event{Type: LLMRequest, ParentID: run, RunID: "a", Payload: ModelCall{Step: 1}})
	call := func(parent, name string) string {
		s := tr.Emit(Event{Type: ToolCallStart, ParentID: parent, RunID: "a", Payload: ToolCall{Name: name}})
		tr.Emit(Event{Type: ToolCallEnd, ParentID: s, RunID: "a", Payload: ToolCall{Name: name, Status: "ok"}})
		return s
	}
	// Two programs: the first makes three calls, one of which (a tool
	// with tools: grants) makes one of its own; the second makes one.
	// A direct call is no program's.
	p1 := tr.Emit(Event{Type: ToolCallStart, ParentID: llm, RunID: "a", Payload: ToolCall{Name: ProgramTool}})
	call(p1, "get_order")
	inner := call(p1, "summarise")
	call(inner, "get_order")
	call(p1, "get_order")
	tr.Emit(Event{Type: ToolCallEnd, ParentID: p1, RunID: "a", Payload: ToolCall{Name: ProgramTool, Status: "ok"}})
	p2 := tr.Emit(Event{Type: ToolCallStart, ParentID: llm, RunID: "a", Payload: ToolCall{Name: ProgramTool}})
	call(p2, "get_order")
	tr.Emit(Event{Type: ToolCallEnd, ParentID: p2, RunID: "a", Payload: ToolCall{Name: ProgramTool, Status: "ok"}})
	call(llm, "get_order")
	tr.Emit(Event{Type: RunEnd, ParentID: run, RunID: "a", Payload: Run{Status: "ok", Steps: 1}})
	s, err := Summarize(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if s.Programs != 2 || s.ProgramCalls != 4 || s.MaxProgramCalls != 3 || s.Ratios.CallsPerProgram == nil || *s.Ratios.CallsPerProgram != 2 {
		t.Fatalf("programs %d, calls %d, max %d, per program %v; want 2, 4, 3, 2", s.Programs, s.ProgramCalls, s.MaxProgramCalls, s.Ratios.CallsPerProgram)
	}
	if text := s.String(); !strings.Contains(text, "programs: 2, making 4 tool calls (2.0 per program, at most 3)") {
		t.Errorf("text lacks the programs:\n%s", text)
	}
}
