package loop

import (
	"time"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/trace"
)

// traceEvent emits one event of r's run and returns its span id; without
// a tracer it does nothing. It is a function, not a method, to take the
// payload as its own type P (a method cannot have a type parameter):
// [trace.EmitPayload] then writes it to a JSONL sink without copying it to
// the heap, as passing it as a [trace.Payload] would.
func traceEvent[P trace.Payload](r *runner, typ trace.Type, parent string, p P) string {
	if r.tr == nil {
		return ""
	}
	return trace.EmitPayload(r.tr, trace.Event{Type: typ, ParentID: parent, RunID: r.st.RunID}, p)
}

// preview returns a redacted, bounded preview of s for an event, or "" when
// nothing is traced (so untraced runs never pay for it).
func (r *runner) preview(s string) string {
	if r.tr == nil || s == "" {
		return ""
	}
	return trace.Preview(s, trace.PreviewLimit)
}

// endTrace emits run_end; the run's early calls have ended (end).
func (r *runner) endTrace(status, output string, err error) {
	u := r.st.Usage
	p := trace.Run{Status: status, Steps: r.st.Step, Output: r.preview(output),
		InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, CachedTokens: u.CachedTokens, Tainted: r.st.Tainted}
	if r.b.ShadowGuards {
		p.ShadowGuards, p.WouldBlock = true, int(r.wouldBlock.Load())
	}
	if e := r.early; e != nil && e.started > 0 {
		p.EarlyToolCalls = int(e.used.Load())
	}
	if err != nil {
		p.Error = err.Error()
	}
	traceEvent(r, trace.RunEnd, r.runSpan, p)
}

func msSince(t0 time.Time) float64 {
	if t0.IsZero() {
		return 0
	}
	return float64(time.Since(t0).Nanoseconds()) / 1e6
}

// responseShape counts m's tool calls and reports whether it carries
// reasoning, for llm_response, without copying parts as m.ToolCalls and
// m.Reasoning do.
func responseShape(m llm.Message) (calls int, reasoning bool) {
	for _, p := range m.Parts {
		switch {
		case p.Type == llm.PartToolCall && p.ToolCall != nil:
			calls++
		case p.Type == llm.PartReasoning && p.Text != "":
			reasoning = true
		}
	}
	return calls, reasoning
}
