package loop

import (
	"context"
	"errors"
	"fmt"
	"iter"

	"github.com/autoagent-go/autoagent/codemode"
	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/memory"
	"github.com/autoagent-go/autoagent/retrieve"
	"github.com/autoagent-go/autoagent/tool"
	"github.com/autoagent-go/autoagent/trace"
)

// DefaultSystemPrompt is the system prompt of an Agent with neither System
// nor SystemFunc.
const DefaultSystemPrompt = "You are an AI agent with tools.\nUse tools when they are useful.\nKeep final answers concise and grounded in tool results."

// Agent runs the agent loop: it calls the model, runs the tools it asks
// for, and repeats until the model answers, within [Bounds].
//
// The zero value works once Provider is set. An Agent is configuration:
// runs never modify it, so one Agent serves any number of concurrent runs,
// and changing a field between runs (raising the budget before a Resume)
// is how a host adjusts it. Do not change fields while runs are going.
type Agent struct {
	// Provider is the model. Required.
	Provider llm.Provider
	// Tools are the tools the model may call; nil means none.
	Tools *tool.Registry

	// System is the system prompt of Run and Stream; "" means
	// DefaultSystemPrompt (unless SystemFunc is set).
	System string
	// SystemFunc, when set, computes the system prompt at the start of
	// each Run or Stream (RunMessages uses the caller's messages as they
	// are). An error fails the run before any model call.
	SystemFunc func(ctx context.Context) (string, error)
	// Model, Temperature and MaxTokens are passed on every request.
	Model       string
	Temperature *float64
	MaxTokens   int

	// Bounds are the run's limits.
	Bounds Bounds
	// MaxParallelTools bounds how many calls of one turn run at once; 0
	// means 8, 1 runs them one after the other. Results always reach the
	// transcript in the model's call order.
	MaxParallelTools int
	// MaxEarlyTools bounds the calls that may start while a streamed answer
	// is still arriving; 0 means 4, a negative
	// value switches early starts off, and MaxParallelTools bounds them
	// too. Only calls of tools flagged Idempotent start early, once
	// complete and once every check of the tool phase (guards, policy with
	// [PolicyInput].Early set) lets them run; the tool phase then awaits
	// the result instead of running the call, so it runs once, and the
	// transcript and events are those of a run without early starts. A
	// call the final answer lacks, or the tool phase refuses, is cancelled
	// and its result discarded. Run and RunMessages do not stream and start
	// nothing early.
	MaxEarlyTools int

	// Knowledge is what the model is given beyond the transcript: the
	// memory that compacts it and the retrieval that adds passages
	// relevant to the question. The zero value adds nothing.
	Knowledge Knowledge

	// Checks are the host's checks on the run: the guardrails, the tool
	// hooks, the post-turn hook and the policy. The zero value checks
	// nothing beyond the built-in guards of Bounds.
	Checks Checks
	// Structured, once its Schema is set, makes the final answer a JSON
	// value matching it (see [StructuredOutput]).
	Structured StructuredOutput
	// ToolSearchThreshold: with more tools than this, the model is offered
	// find_tools (BM25 over the tools' names, descriptions and argument
	// names) and the tools it found so far, instead of every tool; 0 means
	// 20, negative never. A call of a tool not yet
	// found is refused, naming find_tools; found tools stay found across
	// pauses (RunState.Revealed). Guards, policy and the calls themselves
	// always see the whole registry.
	ToolSearchThreshold int
	// CodeMode, when on, offers the model run_program: a JavaScript
	// program calling the run's tools as await tools.NAME(args), declared
	// to it as TypeScript from their schemas, run by CodeMode.Runner
	// (jsprogram: a fresh sandboxed engine instance per program). Each
	// call the program makes passes the gate a direct call passes (see
	// CallNested): counted, guarded, policed, approved, recorded so that a
	// program re-run after an approval gets the results of the calls it
	// made before instead of making them again. Mode codemode.Also offers
	// it beside the tools, codemode.Only instead of them (tool search
	// still applies, to what is declared). See package codemode.
	CodeMode codemode.Config

	// Checkpoint, when set, receives the state before the tools of each
	// turn run, after each completed step, after each correction and when
	// the run stops. A failure stops the run with an error wrapping
	// ErrCheckpoint. The state shares storage with the run: encode or Clone
	// it before returning.
	Checkpoint func(ctx context.Context, st *RunState) error
	// Journal, when set, records each tool call before and after it runs,
	// which makes side effects exactly-once across crashes (see [Journal]).
	Journal Journal
	// Recorder, when set, records model responses and tool results for
	// [Replay].
	Recorder *Recorder
	// Tracer receives lifecycle events; nil traces nothing at no cost.
	Tracer *trace.Tracer
	// NewRunID, when set, names each new run ([RunState.RunID], the
	// first half of every idempotency key); nil names it at random. An
	// engine that replays the loop (a durable workflow) sets one that
	// gives the same name every time.
	NewRunID func() string

	replay *replayer
}

// Knowledge is what a run's model is given beyond its transcript, each
// optional.
type Knowledge struct {
	// Memory, when set, compacts the transcript once at the start of each
	// run (never on resume). Failure is not fatal: the run goes on with the
	// original messages. Its model spend counts in the run's usage.
	Memory memory.Memory
	// Retrieval, once its Retriever is set, puts passages relevant to the
	// current question before the model on each call, in one bounded
	// block (see retrieve.Config).
	Retrieval retrieve.Config
}

// Checks are the host's checks on a run, each optional. The gate, which
// every tool call passes before it runs, asks the pre-tool hooks, then
// the built-in guards (Bounds), then the policy; each result passes the
// post-tool hooks, then the tool-result guardrails; each final answer
// passes the output guardrails, then the output schema
// ([Agent].Structured), then the post-turn hook.
type Checks struct {
	// InputGuardrails check the prompt before the first model call,
	// OutputGuardrails the final answer, ToolResultGuardrails each tool
	// result before the model sees it (see [Guardrail]). A block stops the
	// run with a *GuardrailError.
	InputGuardrails, OutputGuardrails, ToolResultGuardrails []Guardrail
	// PreToolHooks run, in order, on each tool call of the model before
	// the guards and the policy see it: a hook allows it, denies it with
	// a reason the model reads, or rewrites its arguments (validated
	// against the tool's schema again). A failing hook denies. See
	// [PreToolHook].
	PreToolHooks []PreToolHook
	// PostToolHooks run, in order, on each result before the model sees
	// it (before the width bound and the untrusted frame); a failing hook
	// leaves the result as it was, and is traced.
	PostToolHooks []PostToolHook
	// PostTurn, when set, sees each final answer and may send a correction
	// (see [PostTurnHook]).
	PostTurn PostTurnHook
	// MaxCorrections caps the corrections of a run, PostTurn's and the
	// output guardrails'; 0 means 1, a negative value disables them.
	MaxCorrections int
	// Policy, when set, is consulted for every tool call before any call
	// of the turn runs (see [Policy]).
	Policy Policy
}

// Run runs the agent on prompt: [system prompt, user prompt], then the
// loop.
//
// It returns a *Result and a nil error when the model answered. When a
// bound stopped the run (max steps, token budget, approval, cancellation)
// it returns both the Result and a *[StopError] whose State resumes the run.
// When the run failed (provider error, checkpoint failure) it returns a nil
// Result and a *[RunError] holding the state after the last completed step.
func (a *Agent) Run(ctx context.Context, prompt string) (*Result, error) {
	msgs, err := a.initialMessages(ctx, prompt)
	if err != nil {
		return nil, err
	}
	return a.RunMessages(ctx, msgs)
}

// RunMessages runs the agent on a caller-supplied history, used as it is
// (no system prompt is added). Results are as for Run.
func (a *Agent) RunMessages(ctx context.Context, msgs []llm.Message) (*Result, error) {
	if err := checkHistory(msgs); err != nil {
		return nil, err
	}
	return a.execute(ctx, newState(msgs), false, nil)
}

// checkHistory refuses a caller-supplied history the model could not use.
func checkHistory(msgs []llm.Message) error {
	if len(msgs) == 0 {
		return errors.New("loop: RunMessages needs at least one message")
	}
	for i, m := range msgs {
		if err := m.Validate(); err != nil {
			return fmt.Errorf("loop: messages[%d]: %w", i, err)
		}
	}
	return nil
}

// Resume continues a run from st: after an approval pause (with the
// decisions given as options), a bound (after raising it), a cancellation
// or a crash (from the last checkpoint). Memory is not compacted again;
// step numbering, spend and taint continue. A state whose run is done
// returns its Result without calling the model. st is not modified.
func (a *Agent) Resume(ctx context.Context, st *RunState, opts ...ResumeOption) (*Result, error) {
	s, err := prepareResume(st, opts)
	if err != nil {
		return nil, err
	}
	return a.execute(ctx, s, true, nil)
}

// Stream runs the agent on prompt like Run and yields its events: text and
// reasoning deltas (the provider's native stream), tool starts and ends,
// corrections, approval requests, and last an EventDone carrying the
// Result. The error of the last pair is what Run would return with it.
//
// The sequence is single-use. Stopping the iteration early cancels the run:
// the model call and running tools see their context cancelled, and no
// goroutine outlives the iteration.
func (a *Agent) Stream(ctx context.Context, prompt string) iter.Seq2[Event, error] {
	return a.stream(ctx, func() (*RunState, bool, error) {
		msgs, err := a.initialMessages(ctx, prompt)
		return newState(msgs), false, err
	})
}

// StreamMessages is Stream on a caller-supplied history.
func (a *Agent) StreamMessages(ctx context.Context, msgs []llm.Message) iter.Seq2[Event, error] {
	return a.stream(ctx, func() (*RunState, bool, error) { return newState(msgs), false, checkHistory(msgs) })
}

// StreamResume is Resume, streamed.
func (a *Agent) StreamResume(ctx context.Context, st *RunState, opts ...ResumeOption) iter.Seq2[Event, error] {
	return a.stream(ctx, func() (*RunState, bool, error) {
		s, err := prepareResume(st, opts)
		return s, true, err
	})
}

func (a *Agent) stream(ctx context.Context, setup func() (*RunState, bool, error)) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		st, resumed, err := setup()
		if err != nil {
			yield(Event{Type: EventDone}, err)
			return
		}
		stopped := false
		emit := func(ev Event) bool {
			if !stopped && !yield(ev, nil) {
				stopped = true
			}
			return !stopped
		}
		res, err := a.execute(ctx, st, resumed, emit)
		if stopped || errors.Is(err, errAborted) {
			return
		}
		ev := Event{Type: EventDone, Result: res}
		if res != nil {
			ev.Step = res.Steps
		}
		yield(ev, err)
	}
}

// initialMessages builds [system, user] for Run and Stream.
func (a *Agent) initialMessages(ctx context.Context, prompt string) ([]llm.Message, error) {
	sys := a.System
	if a.SystemFunc != nil {
		err := protect("SystemFunc", func() (err error) {
			sys, err = a.SystemFunc(ctx)
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("loop: system prompt: %w", err)
		}
	}
	if sys == "" {
		sys = DefaultSystemPrompt
	}
	return []llm.Message{llm.SystemText(sys), llm.UserText(prompt)}, nil
}

func newState(msgs []llm.Message) *RunState {
	return &RunState{Version: stateVersion, Messages: msgs}
}

// prepareResume validates st and returns a copy carrying the decisions.
func prepareResume(st *RunState, opts []ResumeOption) (*RunState, error) {
	if st == nil {
		return nil, fmt.Errorf("%w: nil state", ErrBadState)
	}
	if err := st.Validate(); err != nil {
		return nil, err
	}
	var o resumeOptions
	for _, opt := range opts {
		opt(&o)
	}
	s := st.snapshot()
	for i := range s.Completed {
		// A result kept by a build older than ToolResult.Untrusted says
		// so only by its frame.
		if c := &s.Completed[i]; framed(c.Content) {
			c.Untrusted = true
		}
	}
	if err := applyDecisions(s, o.decisions); err != nil {
		return nil, err
	}
	return s, nil
}
