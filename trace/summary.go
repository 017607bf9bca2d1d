package trace

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// Summary is what [Summarize] computes from a trace file.
type Summary struct {
	// Events is the number of events read.
	Events int `json:"events"`
	// Runs counts run_start events; RunsByStatus counts run_end statuses.
	Runs         int            `json:"runs"`
	RunsByStatus map[string]int `json:"runs_by_status"`
	// Steps sums the steps reported by run_end events.
	Steps int `json:"steps"`
	// LLMCalls counts model calls; LLMErrors those that failed; LLMMillis
	// is their total duration.
	LLMCalls  int     `json:"llm_calls"`
	LLMErrors int     `json:"llm_errors"`
	LLMMillis float64 `json:"llm_ms"`
	// ToolCalls counts tool calls; ToolErrors those whose result was an
	// error, of which InfraErrors were infrastructure failures.
	ToolCalls   int `json:"tool_calls"`
	ToolErrors  int `json:"tool_errors"`
	InfraErrors int `json:"infra_errors"`
	// Tools breaks tool calls down by tool name, sorted by name.
	Tools []ToolStats `json:"tools"`
	// RedundantToolCalls counts calls whose name and arguments already
	// appeared in the same run.
	RedundantToolCalls int `json:"redundant_tool_calls"`
	// Refusals counts calls refused, by event type (tool_policy_deny,
	// loop_guard_block, trifecta_block, approval_decision rejections).
	Refusals map[string]int `json:"refusals"`
	// WouldBlock counts shadow-mode verdicts that were not enforced.
	WouldBlock int `json:"would_block"`
	// EarlyStarts counts calls started while the model was still streaming
	// (tool_call_early_start); EarlyDiscarded those whose result was thrown
	// away. Both also count in ToolCalls when they ran.
	EarlyStarts    int `json:"early_starts,omitempty"`
	EarlyDiscarded int `json:"early_discarded,omitempty"`
	// Approvals counts approval pauses.
	Approvals int `json:"approvals"`
	// Programs counts code mode's programs (calls of ProgramTool);
	// ProgramCalls the tool calls they made (traced as children of the
	// program's call), MaxProgramCalls the most one program made. A
	// program's calls count in ToolCalls too.
	Programs        int `json:"programs,omitempty"`
	ProgramCalls    int `json:"program_calls,omitempty"`
	MaxProgramCalls int `json:"max_program_calls,omitempty"`
	// CacheHits counts requests the response cache answered (llm/cache),
	// CacheMisses those it passed to the provider; SavedInputTokens and
	// SavedOutputTokens sum what the hits' answers cost when the provider
	// gave them. A hit is also an llm call, of no tokens.
	CacheHits         int   `json:"cache_hits,omitempty"`
	CacheMisses       int   `json:"cache_misses,omitempty"`
	SavedInputTokens  int64 `json:"saved_input_tokens,omitempty"`
	SavedOutputTokens int64 `json:"saved_output_tokens,omitempty"`
	// PrunedChars sums the characters pruned from model views.
	PrunedChars int `json:"pruned_chars"`
	// Token counts, summed over model responses; TokensReported is false
	// when no response reported usage (the counts are then unknown, not 0).
	InputTokens    int64 `json:"input_tokens"`
	OutputTokens   int64 `json:"output_tokens"`
	CachedTokens   int64 `json:"cached_tokens"`
	TokensReported bool  `json:"tokens_reported"`
	// BadLines lists (up to 20) line numbers that were not valid events;
	// BadLineCount counts them all. A crash can leave a truncated last line.
	BadLines     []int `json:"bad_lines,omitempty"`
	BadLineCount int   `json:"bad_line_count,omitempty"`

	// Successes counts runs that ended "ok" (the model answered).
	Successes int `json:"successes"`
	// TokensPerSuccess is all input+output tokens over Successes: the
	// failed runs' tokens are paid too. Nil when usage was not reported
	// or no run succeeded.
	TokensPerSuccess *float64 `json:"tokens_per_success"`
	// Ratios relate the counts; each is nil when its denominator is zero
	// or unknown.
	Ratios Ratios `json:"ratios"`
	// PerRun breaks the trace down by run, in the order runs started.
	PerRun []RunStats `json:"per_run"`
}

// Ratios are the summary's counts related to each other.
type Ratios struct {
	SuccessRate       *float64 `json:"success_rate"`                // successes over ended runs
	TokensPerStep     *float64 `json:"tokens_per_step"`             // tokens over steps
	ToolCallsPerRun   *float64 `json:"tool_calls_per_run"`          // tool calls over runs
	ToolErrorRate     *float64 `json:"tool_error_rate"`             // tool errors over tool calls
	RedundantCallRate *float64 `json:"redundant_call_rate"`         // repeated calls over tool calls
	CallsPerProgram   *float64 `json:"calls_per_program,omitempty"` // program calls over programs
	CachedInputRate   *float64 `json:"cached_input_rate"`           // cached over input tokens
}

// RunStats is one run of a trace.
type RunStats struct {
	RunID string `json:"run_id"`
	// Status is the run_end's ("ok", "max_steps", "error", …); "" when the
	// trace holds no end for the run (it was cut short, or still running).
	Status     string `json:"status"`
	Steps      int    `json:"steps"`
	LLMCalls   int    `json:"llm_calls"`
	ToolCalls  int    `json:"tool_calls"`
	ToolErrors int    `json:"tool_errors"`
	Refusals   int    `json:"refusals"`
	// Tokens sums the run's model responses; TokensReported as for the
	// summary.
	InputTokens    int64 `json:"input_tokens"`
	OutputTokens   int64 `json:"output_tokens"`
	TokensReported bool  `json:"tokens_reported"`
	// DurationMS is from run_start to run_end; 0 without both.
	DurationMS float64 `json:"duration_ms"`

	start time.Time
}

// ToolStats summarises the calls of one tool.
type ToolStats struct {
	Name        string  `json:"name"`
	Calls       int     `json:"calls"`
	Errors      int     `json:"errors"`
	InfraErrors int     `json:"infra_errors"`
	TotalMillis float64 `json:"total_ms"`
	MaxMillis   float64 `json:"max_ms"`
}

// MeanMillis returns the mean duration of the tool's calls.
func (t ToolStats) MeanMillis() float64 {
	if t.Calls == 0 {
		return 0
	}
	return t.TotalMillis / float64(t.Calls)
}

// ProgramTool is the name of code mode's program tool (codemode.ToolName,
// which a test keeps equal): its calls are programs, and the tool calls
// traced under them are the programs' calls.
const ProgramTool = "run_program"

// refusalTypes are the events that mean a call was refused.
var refusalTypes = map[Type]bool{PolicyDeny: true, LoopGuardBlock: true, TrifectaBlock: true}

// Summarize reads a JSONL trace (as written by [JSONL]) and returns its
// metrics. Lines that are not events are counted in BadLines and skipped, so
// a file cut short by a crash still summarises; only a read error fails.
func Summarize(r io.Reader) (*Summary, error) {
	s := &Summary{RunsByStatus: map[string]int{}, Refusals: map[string]int{}}
	tools := map[string]*ToolStats{}
	seen := map[string]bool{}
	programs := map[string]int{} // a program's span → its calls
	runs := map[string]int{}     // run id → index in PerRun
	br := bufio.NewReader(r)
	for line := 1; ; line++ {
		raw, err := br.ReadBytes('\n')
		if len(bytes.TrimSpace(raw)) > 0 {
			var ev Event
			if jerr := json.Unmarshal(raw, &ev); jerr != nil || ev.Type == "" {
				s.BadLineCount++
				if len(s.BadLines) < 20 {
					s.BadLines = append(s.BadLines, line)
				}
			} else {
				s.add(&ev, tools, seen)
				s.addRun(&ev, runs)
				s.addProgram(&ev, programs)
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return s, fmt.Errorf("trace: reading trace: %w", err)
		}
	}
	for _, t := range tools {
		s.Tools = append(s.Tools, *t)
	}
	slices.SortFunc(s.Tools, func(a, b ToolStats) int { return strings.Compare(a.Name, b.Name) })
	s.ratios()
	return s, nil
}

// addProgram counts programs and the calls made under them.
func (s *Summary) addProgram(ev *Event, programs map[string]int) {
	if ev.Type != ToolCallStart {
		return
	}
	if n, ok := programs[ev.ParentID]; ok && ev.ParentID != "" {
		programs[ev.ParentID] = n + 1
		s.ProgramCalls++
		s.MaxProgramCalls = max(s.MaxProgramCalls, n+1)
	}
	if p, _ := ev.Payload.(ToolCall); p.Name == ProgramTool && ev.SpanID != "" {
		if _, again := programs[ev.SpanID]; !again {
			s.Programs++
			programs[ev.SpanID] = 0
		}
	}
}

// addRun counts ev in its run's line of PerRun.
func (s *Summary) addRun(ev *Event, runs map[string]int) {
	if ev.RunID == "" {
		return
	}
	i, ok := runs[ev.RunID]
	if !ok {
		i = len(s.PerRun)
		runs[ev.RunID] = i
		s.PerRun = append(s.PerRun, RunStats{RunID: ev.RunID})
	}
	r := &s.PerRun[i]
	switch ev.Type {
	case RunStart:
		r.start = ev.Time
	case RunEnd:
		p, _ := ev.Payload.(Run)
		r.Status, r.Steps = p.Status, p.Steps
		if !r.start.IsZero() && !ev.Time.IsZero() {
			r.DurationMS = float64(ev.Time.Sub(r.start)) / float64(time.Millisecond)
		}
		if p.Status == "ok" {
			s.Successes++
		}
	case LLMRequest:
		r.LLMCalls++
	case LLMResponse:
		p, _ := ev.Payload.(ModelCall)
		if p.InputTokens != 0 || p.OutputTokens != 0 || p.CachedTokens != 0 {
			r.TokensReported = true
		}
		r.InputTokens += p.InputTokens
		r.OutputTokens += p.OutputTokens
	case ToolCallEnd:
		r.ToolCalls++
		if p, _ := ev.Payload.(ToolCall); p.Status == "error" {
			r.ToolErrors++
		}
	case ApprovalDecision:
		if p, _ := ev.Payload.(Guard); p.Verdict == "reject" {
			r.Refusals++
		}
	}
	if refusalTypes[ev.Type] {
		r.Refusals++
	}
}

// ratios fills TokensPerSuccess and Ratios from the counts.
func (s *Summary) ratios() {
	ratio := func(num, den float64, known bool) *float64 {
		if !known || den == 0 {
			return nil
		}
		v := num / den
		return &v
	}
	tokens := float64(s.InputTokens + s.OutputTokens)
	ended := sumCounts(s.RunsByStatus)
	s.TokensPerSuccess = ratio(tokens, float64(s.Successes), s.TokensReported)
	s.Ratios = Ratios{
		SuccessRate:       ratio(float64(s.Successes), float64(ended), true),
		TokensPerStep:     ratio(tokens, float64(s.Steps), s.TokensReported),
		ToolCallsPerRun:   ratio(float64(s.ToolCalls), float64(s.Runs), true),
		ToolErrorRate:     ratio(float64(s.ToolErrors), float64(s.ToolCalls), true),
		RedundantCallRate: ratio(float64(s.RedundantToolCalls), float64(s.ToolCalls), true),
		CallsPerProgram:   ratio(float64(s.ProgramCalls), float64(s.Programs), true),
		CachedInputRate:   ratio(float64(s.CachedTokens), float64(s.InputTokens), s.TokensReported),
	}
}

func (s *Summary) add(ev *Event, tools map[string]*ToolStats, seen map[string]bool) {
	s.Events++
	switch ev.Type {
	case RunStart:
		s.Runs++
	case RunEnd:
		p, _ := ev.Payload.(Run)
		s.RunsByStatus[p.Status]++
		s.Steps += p.Steps
	case LLMRequest:
		s.LLMCalls++
	case LLMResponse:
		p, _ := ev.Payload.(ModelCall)
		s.LLMMillis += p.DurationMS
		if p.Status == "error" {
			s.LLMErrors++
		}
		if p.InputTokens != 0 || p.OutputTokens != 0 || p.CachedTokens != 0 {
			s.TokensReported = true
		}
		s.InputTokens += p.InputTokens
		s.OutputTokens += p.OutputTokens
		s.CachedTokens += p.CachedTokens
	case ToolCallStart:
		p, _ := ev.Payload.(ToolCall)
		key := ev.RunID + "\x00" + p.Name + "\x00" + p.Arguments
		if seen[key] {
			s.RedundantToolCalls++
		}
		seen[key] = true
	case ToolCallEnd:
		p, _ := ev.Payload.(ToolCall)
		s.ToolCalls++
		t := tools[p.Name]
		if t == nil {
			t = &ToolStats{Name: p.Name}
			tools[p.Name] = t
		}
		t.Calls++
		t.TotalMillis += p.DurationMS
		t.MaxMillis = max(t.MaxMillis, p.DurationMS)
		if p.Status == "error" {
			s.ToolErrors++
			t.Errors++
		}
		if p.Infrastructure {
			s.InfraErrors++
			t.InfraErrors++
		}
	case ApprovalRequired:
		s.Approvals++
	case ApprovalDecision:
		if p, _ := ev.Payload.(Guard); p.Verdict == "reject" {
			s.Refusals[string(ev.Type)]++
		}
	case LoopGuardWouldBlock, TrifectaWouldBlock:
		s.WouldBlock++
	case ToolCallEarlyStart:
		s.EarlyStarts++
	case ToolCallEarlyDiscarded:
		s.EarlyDiscarded++
	case ContextPruned:
		p, _ := ev.Payload.(Memory)
		s.PrunedChars += p.CharsSaved
	case CacheHit:
		p, _ := ev.Payload.(ModelCall)
		s.CacheHits++
		s.SavedInputTokens += p.InputTokens
		s.SavedOutputTokens += p.OutputTokens
	case CacheMiss:
		s.CacheMisses++
	}
	if refusalTypes[ev.Type] {
		s.Refusals[string(ev.Type)]++
	}
}

// String renders the summary as the text `autoagent trace summarize` prints.
func (s *Summary) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "events: %d   runs: %d", s.Events, s.Runs)
	if len(s.RunsByStatus) > 0 {
		b.WriteString(" (")
		b.WriteString(formatCounts(s.RunsByStatus))
		b.WriteString(")")
	}
	fmt.Fprintf(&b, "   steps: %d\n", s.Steps)
	fmt.Fprintf(&b, "llm calls: %d", s.LLMCalls)
	if s.LLMErrors > 0 {
		fmt.Fprintf(&b, " (%d failed)", s.LLMErrors)
	}
	fmt.Fprintf(&b, "   %.1f ms\n", s.LLMMillis)
	if s.TokensReported {
		fmt.Fprintf(&b, "tokens: %d in (%d cached), %d out, %d total\n", s.InputTokens, s.CachedTokens, s.OutputTokens, s.InputTokens+s.OutputTokens)
	} else {
		b.WriteString("tokens: not reported\n")
	}
	if s.CacheHits+s.CacheMisses > 0 {
		fmt.Fprintf(&b, "response cache: %d hits, %d misses   saved: %d in, %d out tokens\n", s.CacheHits, s.CacheMisses, s.SavedInputTokens, s.SavedOutputTokens)
	}
	fmt.Fprintf(&b, "tool calls: %d (%d errors, %d infrastructure, %d redundant)", s.ToolCalls, s.ToolErrors, s.InfraErrors, s.RedundantToolCalls)
	if s.EarlyStarts > 0 {
		fmt.Fprintf(&b, "   started early: %d (%d discarded)", s.EarlyStarts, s.EarlyDiscarded)
	}
	b.WriteString("\n")
	for _, t := range s.Tools {
		fmt.Fprintf(&b, "  %-24s %4d calls  %3d errors  mean %8.2f ms  max %8.2f ms\n", t.Name, t.Calls, t.Errors, t.MeanMillis(), t.MaxMillis)
	}
	if s.Programs > 0 {
		fmt.Fprintf(&b, "programs: %d, making %d tool calls (%s per program, at most %d)\n",
			s.Programs, s.ProgramCalls, optional(s.Ratios.CallsPerProgram, "%.1f"), s.MaxProgramCalls)
	}
	fmt.Fprintf(&b, "refusals: %d", sumCounts(s.Refusals))
	if len(s.Refusals) > 0 {
		b.WriteString(" (" + formatCounts(s.Refusals) + ")")
	}
	fmt.Fprintf(&b, "   approvals requested: %d", s.Approvals)
	if s.WouldBlock > 0 {
		fmt.Fprintf(&b, "   shadow would-block: %d", s.WouldBlock)
	}
	b.WriteString("\n")
	if s.PrunedChars > 0 {
		fmt.Fprintf(&b, "pruned from model views: %d chars\n", s.PrunedChars)
	}
	fmt.Fprintf(&b, "successes: %d of %d ended run(s)   tokens per success: %s\n", s.Successes, sumCounts(s.RunsByStatus), optional(s.TokensPerSuccess, "%.1f"))
	r := s.Ratios
	fmt.Fprintf(&b, "ratios: success %s   tokens/step %s   tool calls/run %s   tool errors %s   redundant calls %s   cached input %s\n",
		optional(r.SuccessRate, "%.1f%%", 100), optional(r.TokensPerStep, "%.1f"), optional(r.ToolCallsPerRun, "%.2f"),
		optional(r.ToolErrorRate, "%.1f%%", 100), optional(r.RedundantCallRate, "%.1f%%", 100), optional(r.CachedInputRate, "%.1f%%", 100))
	if len(s.PerRun) > 0 {
		b.WriteString("per run:\n")
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  RUN\tSTATUS\tSTEPS\tLLM\tTOOLS\tERRORS\tREFUSALS\tTOKENS\tMS")
		for _, run := range s.PerRun {
			tokens := "unknown"
			if run.TokensReported {
				tokens = fmt.Sprint(run.InputTokens + run.OutputTokens)
			}
			fmt.Fprintf(tw, "  %s\t%s\t%d\t%d\t%d\t%d\t%d\t%s\t%.1f\n", run.RunID, cmp.Or(run.Status, "(no end)"), run.Steps, run.LLMCalls,
				run.ToolCalls, run.ToolErrors, run.Refusals, tokens, run.DurationMS)
		}
		tw.Flush()
	}
	if s.BadLineCount > 0 {
		fmt.Fprintf(&b, "warning: %d line(s) were not valid events (first: %v)\n", s.BadLineCount, s.BadLines)
	}
	return b.String()
}

func formatCounts(m map[string]int) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

func sumCounts(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// optional formats *f (times scale, when given), or "unknown" for nil.
func optional(f *float64, format string, scale ...float64) string {
	if f == nil {
		return "unknown"
	}
	v := *f
	for _, m := range scale {
		v *= m
	}
	return fmt.Sprintf(format, v)
}
