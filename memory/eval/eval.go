// Package eval measures what an agent retains about a person across
// separate conversations: twelve multi-session scenarios in which facts are
// established, contradicted or made stale, then asked about in a fresh
// session, for several memory configurations.
//
//	report, err := eval.Run(ctx, eval.Config{Provider: provider})
//	if err != nil {
//		log.Fatal(err)
//	}
//	fmt.Print(report.Markdown())
//
// # Method
//
// For each configuration and scenario a fresh memory is built. Every past
// session (the system prompt, the scenario's exchanges and three filler
// exchanges, so that compaction triggers) is passed through the memory's
// Compact in order, then Flush when the memory works in the background.
// Then a new conversation starts: the system prompt and the question are
// compacted by the memory, the recall tool is offered when there is a
// memory, and a small tool-calling loop (at most MaxSteps model calls) gets
// the answer. The answer is correct when it contains an expected phrase and
// no forbidden (stale) phrase; see [Score].
//
// # Deterministic runs
//
// [ScriptedModel] plays every model part without a network: the extraction
// answers written in each [Session], an extractive summary, and a reader
// that calls recall once and answers with what its context holds. The
// scores it gets are fixed by the scenarios, which is what the package's
// tests check; a real provider measures a real model.
package eval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/memory"
	"github.com/autoagent-go/autoagent/memory/memtool"
	"github.com/autoagent-go/autoagent/tool"
)

// SystemPrompt is the system prompt of every session, past and new.
const SystemPrompt = `You assist a survey centre and answer questions about a respondent from what you remember of earlier calls.
If a "recall" tool is available, call it BEFORE answering.
Answer in one precise sentence. If you do not know, say "I don't know".`

// MemoryConfig names a memory configuration and builds a fresh memory for
// one scenario. New returning nil means "no memory".
type MemoryConfig struct {
	Name string
	New  func(ctx context.Context, p llm.Provider) (memory.Memory, error)
}

// DefaultMemories returns the configurations of the published table: no
// memory, a summarizing memory and a fact memory, each folding when more
// than 6 messages are not folded yet and keeping the last 2.
func DefaultMemories() []MemoryConfig {
	return []MemoryConfig{
		{Name: "none", New: func(context.Context, llm.Provider) (memory.Memory, error) { return nil, nil }},
		{Name: "summarizing", New: func(_ context.Context, p llm.Provider) (memory.Memory, error) {
			return memory.NewSummarizing(memory.SummarizingOptions{Provider: p, MaxMessages: 6, KeepRecent: 2})
		}},
		{Name: "fact", New: func(ctx context.Context, p llm.Provider) (memory.Memory, error) {
			return memory.NewFact(ctx, memory.FactOptions{Provider: p, MaxMessages: 6, KeepRecent: 2})
		}},
	}
}

// BufferMemory is the extra configuration of a 6-message [memory.Buffer].
func BufferMemory() MemoryConfig {
	return MemoryConfig{Name: "buffer", New: func(context.Context, llm.Provider) (memory.Memory, error) {
		return memory.NewBuffer(memory.BufferOptions{MaxMessages: 6})
	}}
}

// Config configures [Run]. Only Provider is required.
type Config struct {
	// Provider answers the questions and, unless MemoryProvider is set,
	// makes the memories' own calls.
	Provider llm.Provider
	// MemoryProvider, when set, makes the memories' calls.
	MemoryProvider llm.Provider
	// Model overrides the provider's model for the answering agent.
	Model string
	// Memories are the configurations compared (default DefaultMemories).
	Memories []MemoryConfig
	// Scenarios are the cases (default Scenarios()).
	Scenarios []Scenario
	// MaxSteps bounds the model calls of one answer (default 4).
	MaxSteps int
	// FlushTimeout bounds the wait for background memory work after each
	// session (default 60 s).
	FlushTimeout time.Duration
	// Log, when set, receives one line per scenario as the run progresses.
	Log io.Writer
}

// Report is the outcome of a run.
type Report struct {
	Configs []ConfigResult `json:"configs"`
}

// ConfigResult is the outcome of one memory configuration.
type ConfigResult struct {
	Name     string            `json:"name"`
	Scores   map[string]bool   `json:"scores"`
	Answers  map[string]string `json:"answers"`
	Correct  int               `json:"correct"`
	Total    int               `json:"total"`
	Accuracy float64           `json:"accuracy"`
	// Usage sums what the provider reported for this configuration: the
	// memory's calls and the answering agent's.
	Usage llm.Usage `json:"usage"`
	// Errors lists the scenarios whose run failed, with the reason (the
	// error text is also the answer, so it scores as wrong).
	Errors map[string]string `json:"errors,omitempty"`
}

// Run runs every scenario for every memory configuration. It returns an
// error only when the configuration is unusable or ctx ends; a scenario
// that fails is recorded as a wrong answer with its error.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if cfg.Provider == nil {
		return nil, errors.New("eval: Config.Provider is nil")
	}
	if cfg.MemoryProvider == nil {
		cfg.MemoryProvider = cfg.Provider
	}
	if cfg.Memories == nil {
		cfg.Memories = DefaultMemories()
	}
	if cfg.Scenarios == nil {
		cfg.Scenarios = Scenarios()
	}
	if cfg.MaxSteps <= 0 {
		cfg.MaxSteps = 4
	}
	if cfg.FlushTimeout <= 0 {
		cfg.FlushTimeout = time.Minute
	}
	rep := &Report{}
	for _, mc := range cfg.Memories {
		res := ConfigResult{Name: mc.Name, Scores: map[string]bool{}, Answers: map[string]string{}, Total: len(cfg.Scenarios)}
		for _, sc := range cfg.Scenarios {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			ans, usage, err := runScenario(ctx, cfg, mc, sc)
			if err != nil {
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				if res.Errors == nil {
					res.Errors = map[string]string{}
				}
				res.Errors[sc.ID] = err.Error()
				ans = err.Error()
			}
			ok := err == nil && Score(sc, ans)
			res.Scores[sc.ID], res.Answers[sc.ID] = ok, ans
			res.Usage = res.Usage.Add(usage)
			if ok {
				res.Correct++
			}
			if cfg.Log != nil {
				mark := "wrong"
				if ok {
					mark = "right"
				}
				fmt.Fprintf(cfg.Log, "%-12s %-22s %s: %s\n", mc.Name, sc.ID, mark, oneLine(ans, 160))
			}
		}
		if res.Total > 0 {
			res.Accuracy = float64(res.Correct) / float64(res.Total)
		}
		rep.Configs = append(rep.Configs, res)
	}
	return rep, nil
}

// runScenario plays the past sessions through a fresh memory and asks the
// question in a new session.
func runScenario(ctx context.Context, cfg Config, mc MemoryConfig, sc Scenario) (string, llm.Usage, error) {
	var total llm.Usage
	mem, err := mc.New(ctx, cfg.MemoryProvider)
	if err != nil {
		return "", total, fmt.Errorf("building memory %s: %w", mc.Name, err)
	}
	if c, ok := mem.(io.Closer); ok {
		defer c.Close()
	}
	if mem != nil {
		for i, s := range sc.Sessions {
			_, u, err := mem.Compact(ctx, SessionMessages(s))
			if u != nil {
				total = total.Add(*u)
			}
			if err != nil {
				return "", total, fmt.Errorf("session %d: compaction failed: %w", i+1, err)
			}
			if f, ok := mem.(memory.Flusher); ok {
				fctx, cancel := context.WithTimeout(ctx, cfg.FlushTimeout)
				err := f.Flush(fctx)
				cancel()
				if err != nil {
					return "", total, fmt.Errorf("session %d: background consolidation failed: %w", i+1, err)
				}
			}
		}
	}
	ans, u, err := Ask(ctx, cfg.Provider, cfg.Model, mem, sc.Question, cfg.MaxSteps)
	return ans, total.Add(u), err
}

// SessionMessages is what a past session looks like to the memory: the
// system prompt, the session's exchanges, then the fillers.
func SessionMessages(s Session) []llm.Message {
	msgs := []llm.Message{llm.SystemText(SystemPrompt)}
	for _, t := range append(append([]Turn(nil), s.Turns...), fillers...) {
		msgs = append(msgs, llm.UserText(t.User), llm.AssistantText(t.Assistant))
	}
	return msgs
}

// Ask runs one fresh conversation: the memory compacts the system prompt
// and question (injecting what it keeps), the recall tool is offered when
// there is a memory, and tool calls are run until the model answers or
// maxSteps model calls were made.
func Ask(ctx context.Context, p llm.Provider, model string, mem memory.Memory, question string, maxSteps int) (string, llm.Usage, error) {
	var total llm.Usage
	msgs := []llm.Message{llm.SystemText(SystemPrompt), llm.UserText(question)}
	reg, err := tool.NewRegistry()
	if err != nil {
		return "", total, err
	}
	if mem != nil {
		out, u, err := mem.Compact(ctx, msgs)
		if u != nil {
			total = total.Add(*u)
		}
		if err == nil {
			msgs = out
		}
		recall, err := memtool.Recall(mem, memtool.Options{})
		if err != nil {
			return "", total, err
		}
		if err := reg.Add(recall); err != nil {
			return "", total, err
		}
	}
	last := ""
	for range maxSteps {
		resp, err := p.Complete(ctx, &llm.Request{Model: model, Messages: msgs, Tools: reg.Specs()})
		if err != nil {
			return "", total, err
		}
		if resp.Usage != nil {
			total = total.Add(resp.Usage.Normalize())
		}
		msgs = append(msgs, resp.Message)
		calls := resp.Message.ToolCalls()
		if t := strings.TrimSpace(resp.Message.Text()); t != "" {
			last = t
		}
		if len(calls) == 0 {
			return last, total, nil
		}
		for _, c := range calls {
			res, err := reg.Call(ctx, tool.FromLLM(c))
			text := res.Text()
			if err != nil {
				text = "error: " + err.Error()
			}
			msgs = append(msgs, llm.ToolResultMessage(llm.ToolResult{CallID: c.ID, Name: c.Name, Content: text, IsError: res.IsError || err != nil}))
		}
	}
	if last == "" {
		return "", total, fmt.Errorf("no answer within %d model calls", maxSteps)
	}
	return last, total, nil
}

// Markdown renders the report as a table: one row per scenario, one column
// per configuration, then accuracy and tokens.
func (r *Report) Markdown() string {
	var b strings.Builder
	b.WriteString("| scenario |")
	for _, c := range r.Configs {
		b.WriteString(" " + c.Name + " |")
	}
	b.WriteString("\n|---|")
	for range r.Configs {
		b.WriteString("---|")
	}
	b.WriteByte('\n')
	if len(r.Configs) > 0 {
		for _, sc := range scenarioOrder(r.Configs[0]) {
			b.WriteString("| " + sc + " |")
			for _, c := range r.Configs {
				mark := "✗"
				if c.Scores[sc] {
					mark = "✓"
				}
				b.WriteString(" " + mark + " |")
			}
			b.WriteByte('\n')
		}
	}
	b.WriteString("| **correct** |")
	for _, c := range r.Configs {
		fmt.Fprintf(&b, " **%d/%d (%.0f %%)** |", c.Correct, c.Total, 100*c.Accuracy)
	}
	b.WriteString("\n| tokens |")
	for _, c := range r.Configs {
		fmt.Fprintf(&b, " %d |", c.Usage.TotalTokens)
	}
	b.WriteByte('\n')
	return b.String()
}

// JSON returns the report as indented JSON.
func (r *Report) JSON() ([]byte, error) {
	return json.MarshalIndent(r, "", "  ")
}

// scenarioOrder lists the scenario ids of c in the canonical order first.
func scenarioOrder(c ConfigResult) []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range Scenarios() {
		if _, ok := c.Scores[s.ID]; ok {
			out = append(out, s.ID)
			seen[s.ID] = true
		}
	}
	var extra []string
	for id := range c.Scores {
		if !seen[id] {
			extra = append(extra, id)
		}
	}
	slices.Sort(extra)
	return append(out, extra...)
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
