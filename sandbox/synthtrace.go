package sandbox

import (
	"github.com/autoagent-go/autoagent/synth"
	"github.com/autoagent-go/autoagent/trace"
)

// TraceSynth returns a synth.Options.Observer that writes every step of
// building a model-written tool to tr as a "synth_<stage>" event with a
// trace.Synth payload (tool, status, error, detail, duration, writer usage,
// module hash). synth itself
// imports no tracing package; this is the bridge. Events never carry
// held-out examples, only counts.
func TraceSynth(tr *trace.Tracer) func(synth.Event) {
	if tr == nil {
		return nil
	}
	return func(ev synth.Event) {
		p := trace.Synth{
			Attempt:    ev.Attempt,
			Status:     ev.Status,
			Name:       ev.Tool,
			Detail:     ev.Detail,
			Error:      ev.Error,
			DurationMS: float64(ev.Duration.Microseconds()) / 1000,
			Language:   ev.Language,
			SHA256:     ev.SHA256,
		}
		if u := ev.Usage; u != nil {
			p.InputTokens, p.OutputTokens, p.CachedTokens = u.InputTokens, u.OutputTokens, u.CachedTokens
		}
		tr.Emit(trace.Event{Type: trace.Type("synth_" + string(ev.Stage)), Payload: p})
	}
}
