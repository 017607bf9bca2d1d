package loop

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// defaultMaxSteps is the step bound when [Bounds].MaxSteps is 0.
const defaultMaxSteps = 8

// TrifectaMode says what the lethal-trifecta guard does with a call to an
// egress tool once the run has ingested untrusted content.
type TrifectaMode string

// The trifecta guard modes. The zero value means TrifectaDeny.
const (
	TrifectaDeny    TrifectaMode = "deny"
	TrifectaApprove TrifectaMode = "approve"
	TrifectaOff     TrifectaMode = "off"
)

// Bounds are the limits of a run, in one serialisable value. The zero value
// is the default: 8 steps, no token budget, results neither truncated nor
// pruned, no loop guard, trifecta guard denying.
type Bounds struct {
	// MaxSteps bounds the model calls of a run (not the tool calls); 0
	// means 8. A run that reaches it stops with ErrMaxSteps.
	MaxSteps int `json:"max_steps,omitempty"`
	// TokenBudget caps input+output tokens (the run's own, its memory's
	// and its sub-agents'); 0 means none. It is checked before each model
	// call, so the call that crosses it is never cut.
	TokenBudget int64 `json:"token_budget,omitempty"`
	// MaxToolResultChars bounds, in characters (Unicode code points), the
	// text of each tool result; 0 means none. Longer results keep their
	// head and tail around a marker, and the marker counts against the
	// bound. The result of an untrusted tool is bounded first, then framed
	// (see [IsTainted]): the frame is never cut, and comes on top.
	MaxToolResultChars int `json:"max_tool_result_chars,omitempty"`
	// PruneToolResultsAfter keeps only the N most recent tool results in
	// full in what is sent to the model; older ones become a short note.
	// The transcript, checkpoints and traces keep everything. 0 means never.
	PruneToolResultsAfter int `json:"prune_tool_results_after,omitempty"`
	// PruneBatch prunes in multiples of this many results, so the prompt
	// prefix stays byte-stable between batches and provider prompt caches
	// keep hitting; 0 means 1.
	PruneBatch int `json:"prune_batch,omitempty"`
	// MaxRepeatedToolCalls refuses a call once the same tool with the same
	// arguments has been asked for more than N times in the run; 0 means no
	// loop guard.
	MaxRepeatedToolCalls int `json:"max_repeated_tool_calls,omitempty"`
	// Trifecta is the lethal-trifecta guard's mode; "" means TrifectaDeny.
	Trifecta TrifectaMode `json:"trifecta_guard,omitempty"`
	// MaxToolCalls caps the tool calls the model may make in the run; 0
	// means none. A call past it is refused (ToolCallLimit), and once it
	// is reached the tools are withdrawn: the model is asked to answer
	// with what it has (traced as tools_disabled). Calls tools make
	// through CallNested are not counted.
	MaxToolCalls int `json:"max_tool_calls,omitempty"`
	// ToolTimeout is how long a tool call may take; 0 means no limit of
	// the loop's (a sandboxed tool still has its own). A tool's
	// Flags.Timeout overrides it. Past it the call's context is
	// cancelled and the model gets an error result naming the limit; a
	// Go tool that ignores its context is left to finish on its own, and
	// what it returns is discarded.
	ToolTimeout time.Duration `json:"tool_timeout,omitempty"`
	// ContextWindow is the model's context window in tokens; 0 means the
	// model family's (ContextWindowFor), or none when it is not known.
	// When a model call reports input tokens at ContextShare of it, the
	// run compacts its memory (when the agent has one) and, for the rest
	// of the run, keeps only the 2 most recent tool results in full in
	// what the model is sent (traced as context_budget).
	ContextWindow int64 `json:"context_window,omitempty"`
	// ContextShare is that share, in (0, 1]; 0 means 0.8.
	ContextShare float64 `json:"context_share,omitempty"`
	// ShadowGuards computes and traces what the loop guard and the
	// trifecta guard would refuse without enforcing it. It never weakens
	// the host policy, and a trifecta guard in approve mode still pauses.
	ShadowGuards bool `json:"shadow_guards,omitempty"`
}

// Validate reports the first invalid field.
func (b Bounds) Validate() error {
	for _, f := range []struct {
		name string
		v    int64
	}{
		{"max_steps", int64(b.MaxSteps)},
		{"token_budget", b.TokenBudget},
		{"max_tool_result_chars", int64(b.MaxToolResultChars)},
		{"prune_tool_results_after", int64(b.PruneToolResultsAfter)},
		{"prune_batch", int64(b.PruneBatch)},
		{"max_repeated_tool_calls", int64(b.MaxRepeatedToolCalls)},
		{"max_tool_calls", int64(b.MaxToolCalls)},
		{"tool_timeout", int64(b.ToolTimeout)},
	} {
		if f.v < 0 {
			return fmt.Errorf("loop: bounds: %s is %d; want 0 (default) or more", f.name, f.v)
		}
	}
	if b.ContextShare < 0 || b.ContextShare > 1 {
		return fmt.Errorf("loop: bounds: context_share is %v; want 0 (default 0.8) up to 1", b.ContextShare)
	}
	if b.ContextWindow < 0 {
		return fmt.Errorf("loop: bounds: context_window is %d; want 0 (the model's) or more", b.ContextWindow)
	}
	switch b.Trifecta {
	case "", TrifectaDeny, TrifectaApprove, TrifectaOff:
	default:
		return fmt.Errorf("loop: bounds: trifecta_guard is %q; want \"deny\", \"approve\" or \"off\"", b.Trifecta)
	}
	return nil
}

// resolved returns b with defaults filled in.
func (b Bounds) resolved() Bounds {
	if b.MaxSteps == 0 {
		b.MaxSteps = defaultMaxSteps
	}
	if b.PruneBatch == 0 {
		b.PruneBatch = 1
	}
	if b.Trifecta == "" {
		b.Trifecta = TrifectaDeny
	}
	if b.ContextShare == 0 {
		b.ContextShare = 0.8
	}
	return b
}

// ParseBounds decodes bounds from JSON, refusing unknown fields, and
// validates them.
func ParseBounds(data []byte) (Bounds, error) {
	var b Bounds
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b); err != nil {
		return Bounds{}, fmt.Errorf("loop: bounds: %w", err)
	}
	return b, b.Validate()
}

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
