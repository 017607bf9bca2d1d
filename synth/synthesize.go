package synth

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/autoagent-go/autoagent/internal/jsonvalue"
	"github.com/autoagent-go/autoagent/llm"
)

// Example is one case of the behaviour wanted: the tool called with Args
// must return Expected (compared with [JSONEqual]).
type Example struct {
	Args     json.RawMessage `json:"args"`
	Expected json.RawMessage `json:"expected"`
}

// Task asks for a tool that reproduces examples.
type Task struct {
	// Goal says what the tool is for.
	Goal string
	// Examples are the cases; some are held out and never shown to the
	// writer model, not even on failure.
	Examples []Example
	// Name, InputSchema and Language are passed to [Request].
	Name        string
	InputSchema json.RawMessage
	Language    string
	// Holdout is the share of examples held out, below 1: 0 means
	// DefaultHoldout (40 %), a negative value holds out none. At least one
	// example is always shown, and with fewer than two nothing is held out.
	Holdout float64
	// Seed makes the split: the same seed and examples give the same split.
	Seed uint64
	// MaxAttempts bounds the writer's attempts; 0 means 5.
	MaxAttempts int
	// FeedbackCases is how many failing shown examples a rejected attempt
	// quotes back to the writer; 0 means 3.
	FeedbackCases int
	// OnAttempt, when set, is called after each attempt, for progress.
	OnAttempt func(Attempt)
}

// Synthesis is the outcome of [Builder.Synthesize].
type Synthesis struct {
	// Tool is the accepted tool, loaded quarantined; nil when every
	// attempt was rejected.
	Tool *Tool
	// Attempts lists every attempt, in order.
	Attempts []Attempt
	// Usage sums the writer's usage over every attempt; nil when the
	// provider reported none.
	Usage *llm.Usage
	// Shown and HeldOut count the examples of each side of the split.
	Shown, HeldOut int
	// Staged is where the accepted tool was written; nil when staging is
	// off or nothing was accepted.
	Staged *Staged
}

// Accepted reports whether a tool was accepted.
func (s *Synthesis) Accepted() bool { return s.Tool != nil }

// Attempt is one round of writing and checking a tool.
type Attempt struct {
	Index int    // from 1
	Tool  string // the tool's name, once the writer gave one
	// ShownPassed of ShownTotal shown examples passed (0 of 0 when the
	// tool never ran).
	ShownPassed, ShownTotal int
	// HeldOutRan says the held-out examples ran (only after every shown
	// one passed); HeldOutPassed of HeldOutTotal passed.
	HeldOutRan                  bool
	HeldOutPassed, HeldOutTotal int
	// Stage is the step that rejected the attempt; Feedback is exactly
	// what the writer was told. Both empty for the accepted attempt.
	Stage    Stage
	Feedback string
	Accepted bool
	Duration time.Duration
}

// Synthesize asks the writer for a tool reproducing the examples, at most
// MaxAttempts times, in one conversation: each attempt after the first
// shows the writer its previous answer and why it was rejected. The
// examples are split deterministically; the writer
// sees only the shown ones, and after a rejection only how many held-out
// examples failed, never which. A tool is accepted when it builds, passes
// its self-tests and returns every shown and held-out expected value. A
// rejected tool is unloaded and nothing of it is written; the accepted one
// is staged (unless Options.NoStaging) and returned loaded.
//
// The error is non-nil when the task is invalid or the infrastructure
// failed (the writer's provider, the engine, ctx); running out of attempts
// is not an error: the Synthesis lists them and Accepted reports false.
func (b *Builder) Synthesize(ctx context.Context, task Task) (*Synthesis, error) {
	if len(task.Examples) == 0 {
		return nil, ErrNoExamples
	}
	for i, ex := range task.Examples {
		if !rawIsObject(ex.Args) {
			return nil, fmt.Errorf("synth: example %d: args must be a JSON object", i+1)
		}
		if _, ok := jsonvalue.Decode(ex.Expected); !ok {
			return nil, fmt.Errorf("synth: example %d: expected is not a JSON value", i+1)
		}
	}
	if task.Holdout >= 1 {
		return nil, fmt.Errorf("synth: holdout %.2f: want a share below 1 (at least one example is shown)", task.Holdout)
	}
	holdout := task.Holdout
	if holdout == 0 {
		holdout = DefaultHoldout
	}
	attempts := task.MaxAttempts
	if attempts <= 0 {
		attempts = 5
	}
	feedbackCases := task.FeedbackCases
	if feedbackCases <= 0 {
		feedbackCases = 3
	}
	shownIdx, heldIdx := split(len(task.Examples), holdout, task.Seed)
	shown := pick(task.Examples, shownIdx)
	held := pick(task.Examples, heldIdx)

	acc := &usageAcc{}
	ctx = withUsage(ctx, acc)
	out := &Synthesis{Shown: len(shown), HeldOut: len(held)}
	capability := capabilityText(task.Goal, shown)
	var history []llm.Message
	for i := 1; i <= attempts; i++ {
		start := time.Now()
		a := Attempt{Index: i, ShownTotal: len(shown), HeldOutTotal: len(held)}
		t, err := b.Build(ctx, Request{
			Capability: capability,
			Name:       task.Name, InputSchema: task.InputSchema, Language: task.Language,
			attempt: i, history: history,
		})
		var rej *RejectError
		switch {
		case errors.As(err, &rej):
			a.Stage = rej.Stage
			a.Feedback = "The tool could not be built: " + rej.Reason
			if rej.Stage == StageSelfTest {
				a.Feedback = "The tool failed its own self-test: " + rej.Reason
			}
		case err != nil:
			out.Usage = acc.total()
			return out, err
		default:
			a.Tool = t.Name()
			a.Feedback, err = b.check(ctx, t, &a, shown, held, feedbackCases)
			if err != nil {
				_ = t.Close(context.WithoutCancel(ctx))
				out.Usage = acc.total()
				return out, err
			}
		}
		a.Duration = time.Since(start)
		a.Accepted = a.Feedback == ""
		if !a.Accepted && t != nil {
			_ = t.Close(context.WithoutCancel(ctx))
		}
		out.Attempts = append(out.Attempts, a)
		if task.OnAttempt != nil {
			task.OnAttempt(a)
		}
		if a.Accepted {
			out.Tool = t
			b.emit(Event{Stage: StageAccept, Tool: t.Name(), Language: t.Language(), Attempt: i, Status: StatusOK, SHA256: t.SHA256(),
				Detail: fmt.Sprintf("%d shown and %d held-out examples pass", len(shown), len(held))})
			break
		}
		// The next attempt continues the conversation: the writer sees its
		// answer and what was wrong with it.
		if ans := acc.takeAnswer(); ans != nil {
			history = append(history, *ans, llm.UserText("Your previous attempt was rejected: "+a.Feedback+"\nWrite the corrected tool, answering with the same JSON object."))
		}
	}
	out.Usage = acc.total()
	if out.Tool != nil && !b.opts.NoStaging {
		st, err := b.Stage(ctx, out.Tool, &Provenance{Goal: task.Goal, Examples: len(task.Examples), Shown: len(shown), HeldOut: len(held), Attempts: len(out.Attempts), Usage: out.Usage})
		if err != nil {
			return out, err
		}
		out.Staged = st
	}
	return out, nil
}

// check runs the shown examples, then (when all pass) the held-out ones.
// It returns the feedback for the writer, "" when the tool is accepted.
func (b *Builder) check(ctx context.Context, t *Tool, a *Attempt, shown, held []Example, feedbackCases int) (string, error) {
	start := time.Now()
	var failures []string
	for _, ex := range shown {
		o, err := runCase(ctx, t, ex.Args)
		if err != nil {
			return "", err
		}
		if o.err == "" && JSONEqual(ex.Expected, o.value) {
			a.ShownPassed++
			continue
		}
		failures = append(failures, fmt.Sprintf("args=%s expected=%s got=%s", clip(string(ex.Args), 500), clip(string(ex.Expected), 500), clip(o.String(), 800)))
	}
	fb := ""
	if len(failures) > 0 {
		a.Stage = StageShown
		fb = fmt.Sprintf("%d of the %d shown examples failed. First failures:\n%s", len(failures), len(shown), strings.Join(failures[:min(len(failures), feedbackCases)], "\n"))
	}
	b.emitCheck(StageShown, t, a.Index, a.ShownPassed, len(shown), fb, start)
	if fb != "" {
		return fb, nil
	}

	start = time.Now()
	a.HeldOutRan = true
	for _, ex := range held {
		o, err := runCase(ctx, t, ex.Args)
		if err != nil {
			return "", err
		}
		if o.err == "" && JSONEqual(ex.Expected, o.value) {
			a.HeldOutPassed++
		}
	}
	if failed := len(held) - a.HeldOutPassed; failed > 0 {
		a.Stage = StageHeldOut
		fb = fmt.Sprintf("All shown examples pass, but %d of %d unseen cases fail. Your rule is too specific to the examples: generalise it.", failed, len(held))
	}
	b.emitCheck(StageHeldOut, t, a.Index, a.HeldOutPassed, len(held), fb, start)
	return fb, nil
}

// emitCheck reports one side of the examples: passed of total, rejected
// with the writer's feedback fb unless fb is "".
func (b *Builder) emitCheck(stage Stage, t *Tool, attempt, passed, total int, fb string, start time.Time) {
	ev := Event{Stage: stage, Tool: t.Name(), Language: t.Language(), Attempt: attempt, Status: StatusOK,
		Detail: fmt.Sprintf("%d of %d passed", passed, total), Duration: time.Since(start)}
	if fb != "" {
		ev.Status, ev.Error = StatusRejected, fb
	}
	b.emit(ev)
}

// capabilityText is what the writer is asked for: the goal and the shown
// examples. Held-out examples never appear here, nor in the feedback.
func capabilityText(goal string, shown []Example) string {
	var s strings.Builder
	s.WriteString(strings.TrimSpace(goal))
	s.WriteString("\n\nThe tool must return exactly the expected value for each example below (compared as JSON). ")
	s.WriteString("It will also be checked on other cases you do not see, so implement the general rule, not a lookup of these examples.\n")
	s.WriteString("Examples (args -> expected):\n")
	for _, ex := range shown {
		fmt.Fprintf(&s, "%s -> %s\n", compactJSON(ex.Args), compactJSON(ex.Expected))
	}
	return s.String()
}

func compactJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return string(raw)
	}
	return b.String()
}

func pick(all []Example, idx []int) []Example {
	out := make([]Example, len(idx))
	for i, j := range idx {
		out[i] = all[j]
	}
	return out
}
