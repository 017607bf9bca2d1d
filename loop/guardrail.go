package loop

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/trace"
)

// GuardStage is where a guardrail looks.
type GuardStage string

// The stages.
const (
	// GuardInput is the user's prompt, before the first model call.
	GuardInput GuardStage = "input"
	// GuardOutput is the final answer, before the run is done.
	GuardOutput GuardStage = "output"
	// GuardToolResult is each tool result, before the model sees it.
	GuardToolResult GuardStage = "tool_result"
)

// GuardAction is a guardrail's verdict.
type GuardAction string

// The verdicts.
const (
	GuardAllow GuardAction = "" // or "allow"
	// GuardBlock is a tripwire: the run stops with a *GuardrailError.
	GuardBlock GuardAction = "block"
	// GuardCorrect (output only) gives the model one more turn with
	// Text as the correction, counted in Agent.Checks.MaxCorrections; past the
	// cap it blocks. At the other stages it blocks.
	GuardCorrect GuardAction = "correct"
	// GuardRedact replaces the text with Text.
	GuardRedact GuardAction = "redact"
)

// Guardrail checks a text at the stages it is registered for
// (Agent.Checks.InputGuardrails, OutputGuardrails, ToolResultGuardrails). An error
// or a panic blocks (fail-closed). Guardrails run in order; a redaction is
// what the next one sees. Every verdict but allow is traced. Tool results
// of calls running in parallel are checked in parallel: a Guardrail must
// be safe for concurrent use.
type Guardrail interface {
	Name() string
	Check(ctx context.Context, in *GuardCheck) (GuardVerdict, error)
}

// GuardCheck is what a guardrail sees.
type GuardCheck struct {
	Stage GuardStage
	Text  string
	Tool  string // the tool, for GuardToolResult
	Step  int
	RunID string
}

// GuardVerdict is a guardrail's answer: Action, Reason (said to the
// caller on a block, traced always) and Text (the redacted text, or the
// correction).
type GuardVerdict struct {
	Action GuardAction
	Reason string
	Text   string
}

// ErrGuardrail is wrapped by the error of a run a guardrail stopped.
var ErrGuardrail = errors.New("loop: stopped by a guardrail")

// GuardrailError says which guardrail stopped the run, where, and why.
type GuardrailError struct {
	Stage     GuardStage
	Guardrail string
	Reason    string
}

func (e *GuardrailError) Error() string {
	return fmt.Sprintf("loop: guardrail %s blocked the %s: %s", e.Guardrail, e.Stage, e.Reason)
}

// Unwrap makes errors.Is(err, ErrGuardrail) hold.
func (e *GuardrailError) Unwrap() error { return ErrGuardrail }

// GuardFunc adapts a function to a Guardrail.
func GuardFunc(name string, f func(ctx context.Context, in *GuardCheck) (GuardVerdict, error)) Guardrail {
	return guardFunc{name, f}
}

type guardFunc struct {
	name string
	f    func(context.Context, *GuardCheck) (GuardVerdict, error)
}

func (g guardFunc) Name() string { return g.name }
func (g guardFunc) Check(ctx context.Context, in *GuardCheck) (GuardVerdict, error) {
	return g.f(ctx, in)
}

// guardrails returns the guardrails of stage: the agent's, then those its
// policy file switches on.
func (r *runner) guardrails(stage GuardStage) []Guardrail {
	var own []Guardrail
	switch stage {
	case GuardInput:
		own = r.a.Checks.InputGuardrails
	case GuardOutput:
		own = r.a.Checks.OutputGuardrails
	case GuardToolResult:
		own = r.a.Checks.ToolResultGuardrails
	}
	pg, ok := r.a.Checks.Policy.(PolicyGuardrails)
	if !ok {
		return own
	}
	more := pg.GuardrailsAt(stage)
	if len(more) == 0 {
		return own
	}
	return append(slices.Clip(own), more...)
}

// PolicyGuardrails is a [Policy] that also switches guardrails on, as a
// policy file's "guardrails" object does (package policy's Spec): a run
// whose Agent.Checks.Policy implements it adds the guardrails of each stage
// after the agent's own.
type PolicyGuardrails interface {
	Policy
	GuardrailsAt(stage GuardStage) []Guardrail
}

// checkGuardrails runs gs over text at stage. It returns the text (redacted), a
// correction (output only), or the error that stops the run.
func (r *runner) checkGuardrails(gs []Guardrail, stage GuardStage, step int, parent, tool, text string) (string, string, error) {
	for _, g := range gs {
		in := &GuardCheck{Stage: stage, Text: text, Tool: tool, Step: step, RunID: r.st.RunID}
		var v GuardVerdict
		err := protect("guardrail "+g.Name(), func() (err error) {
			v, err = g.Check(r.ctx, in)
			return err
		})
		if err != nil {
			v = GuardVerdict{Action: GuardBlock, Reason: "the guardrail failed: " + err.Error()}
		}
		ev := trace.Guard{Step: step, Name: g.Name(), Status: string(v.Action), Reason: v.Reason, Stage: string(stage), Tool: tool}
		switch v.Action {
		case GuardAllow, "allow":
			continue
		case GuardRedact:
			traceEvent(r, trace.Guardrail, parent, ev)
			text = v.Text
			continue
		case GuardCorrect:
			if stage == GuardOutput {
				traceEvent(r, trace.Guardrail, parent, ev)
				return text, correctionText(v), nil
			}
		case GuardBlock:
		default:
			v.Reason = fmt.Sprintf("unknown verdict %q", v.Action)
		}
		ev.Status = string(GuardBlock)
		traceEvent(r, trace.Guardrail, parent, ev)
		return text, "", &GuardrailError{Stage: stage, Guardrail: g.Name(), Reason: v.Reason}
	}
	return text, "", nil
}

// guardInput checks the prompt (the last user message) before the first
// model call, redacting it in the run's copy of the transcript.
func (r *runner) guardInput() error {
	msgs := r.st.Messages
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role != llm.RoleUser {
			continue
		}
		text := msgs[i].Text()
		out, _, err := r.checkGuardrails(r.guardrails(GuardInput), GuardInput, 0, r.runSpan, "", text)
		if err != nil {
			return err
		}
		if out != text {
			msgs[i] = setText(msgs[i], out)
		}
		return nil
	}
	return nil
}

func correctionText(v GuardVerdict) string {
	if v.Text != "" {
		return v.Text
	}
	return "Your answer was not accepted: " + v.Reason + ". Answer again."
}

// setText replaces the text parts of m with text (in one part).
func setText(m llm.Message, text string) llm.Message {
	parts := make([]llm.Part, 0, len(m.Parts))
	done := false
	for _, p := range m.Parts {
		if p.Type == llm.PartText {
			if done {
				continue
			}
			p.Text, done = text, true
		}
		parts = append(parts, p)
	}
	if !done {
		parts = append(parts, llm.Part{Type: llm.PartText, Text: text})
	}
	m.Parts = parts
	return m
}
