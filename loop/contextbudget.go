package loop

import (
	"cmp"
	"errors"
	"strings"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/trace"
)

// contextWindows are the context windows of model families, by name
// prefix, longest prefix first where they overlap.
var contextWindows = []struct {
	prefix string
	tokens int64
}{
	{"gpt-4.1", 1_047_576},
	{"gpt-4o", 128_000},
	{"gpt-5", 400_000},
	{"o3", 200_000},
	{"o4", 200_000},
	{"claude", 200_000},
	{"gemini-1.5", 1_048_576},
	{"gemini-2", 1_048_576},
	{"deepseek", 128_000},
	{"llama-3", 128_000},
	{"moonshotai/kimi", 262_144},
	{"kimi", 262_144},
	{"qwen", 131_072},
}

// ContextWindowFor returns the context window, in tokens, of the model
// family model belongs to, or 0 when it is not known.
func ContextWindowFor(model string) int64 {
	m := strings.ToLower(model)
	best, tokens := 0, int64(0)
	for _, w := range contextWindows {
		if strings.HasPrefix(m, w.prefix) && len(w.prefix) > best {
			best, tokens = len(w.prefix), w.tokens
		}
	}
	return tokens
}

// keptResults is how many recent tool results stay in full once the run
// is over its context budget.
const keptResults = 2

// noteInput records what a model call reported, for the budget check
// before the next one.
func (r *runner) noteInput(resp *llm.Response) {
	if resp.Usage != nil {
		r.lastInput = resp.Usage.Normalize().InputTokens
	}
	if resp.Model != "" {
		r.lastModel = resp.Model
	}
}

// contextBudget runs before a model call: once the last call's input
// reached the share of the window, it compacts the memory (once) and turns
// on the pruning of old tool results for the rest of the run.
func (r *runner) contextBudget(step int) {
	if r.overBudget || r.lastInput == 0 {
		return
	}
	window := r.b.ContextWindow
	if window == 0 {
		window = ContextWindowFor(cmp.Or(r.a.Model, r.lastModel))
	}
	if window == 0 || float64(r.lastInput) < r.b.ContextShare*float64(window) {
		return
	}
	r.overBudget = true
	status := "pruned"
	if r.a.Memory != nil {
		if err := r.compactMidRun(); err != nil {
			traceEvent(r, trace.MemoryError, r.runSpan, trace.Memory{Step: step, Error: err.Error()})
		} else {
			status = "compacted, pruned"
		}
	}
	traceEvent(r, trace.ContextBudget, r.runSpan, trace.Memory{Step: step, InputTokens: r.lastInput, Limit: int(window), Kept: keptResults, Status: status})
}

// compactMidRun runs the memory over the transcript between turns,
// fail-open, into a transcript of the run's own.
func (r *runner) compactMidRun() error {
	var out []llm.Message
	var u *llm.Usage
	err := protect("memory", func() (err error) {
		out, u, err = r.a.Memory.Compact(r.memoryContext(), r.st.Messages)
		return err
	})
	if u != nil {
		r.addUsage(*u)
	}
	if err == nil && out == nil {
		err = errors.New("memory returned no messages")
	}
	if err != nil {
		return err
	}
	msgs := make([]llm.Message, len(out), len(out)+16)
	copy(msgs, out)
	r.st.Messages = msgs
	r.st.TurnStart = min(r.st.TurnStart, len(msgs))
	return nil
}
