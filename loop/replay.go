package loop

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"slices"
	"sync"

	"github.com/autoagent-go/autoagent/codemode"
	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/loop/refusal"
	"github.com/autoagent-go/autoagent/tool"
	"github.com/autoagent-go/autoagent/trace"
)

// ReplayMismatch is the error of a replay that diverged from its
// recording. It names the step (and call) where the difference appeared.
type ReplayMismatch struct {
	// Step is the step where the replay diverged.
	Step int
	// Kind is "llm" (the request sent to the model differs, or there are
	// more model calls than recorded), "tool" (a call or its result
	// differs) or "end" (the outcome differs).
	Kind string
	// CallID names the tool call, for Kind "tool".
	CallID string
	// Detail says what differs.
	Detail string
}

func (e *ReplayMismatch) Error() string {
	s := fmt.Sprintf("loop: replay diverged at step %d (%s", e.Step, e.Kind)
	if e.CallID != "" {
		s += " " + e.CallID
	}
	return s + "): " + e.Detail
}

// Recording is a recorded run, read from a [Recorder]'s JSONL. It holds
// the first run of the file (the root run when sub-agents shared the
// recorder).
type Recording struct {
	header *recordLine
	llm    []*recordLine
	tools  map[string]*recordLine
	end    *recordLine
}

// OpenRecording reads the recording at path.
func OpenRecording(path string) (*Recording, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("loop: %w", err)
	}
	defer f.Close()
	rec, err := ReadRecording(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return rec, nil
}

// ReadRecording reads a recording. Malformed lines are errors naming the
// line: a recording is a test fixture, and half of one proves nothing.
func ReadRecording(r io.Reader) (*Recording, error) {
	rec := &Recording{tools: map[string]*recordLine{}}
	br := bufio.NewReader(r)
	for n := 1; ; n++ {
		raw, err := br.ReadBytes('\n')
		if t := bytes.TrimSpace(raw); len(t) > 0 {
			var l recordLine
			if jerr := json.Unmarshal(t, &l); jerr != nil {
				return nil, fmt.Errorf("loop: recording line %d: %v", n, jerr)
			}
			if err := rec.add(&l, n); err != nil {
				return nil, err
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("loop: reading recording: %w", err)
		}
	}
	if rec.header == nil {
		return nil, errors.New("loop: the recording has no run (no \"run\" line)")
	}
	return rec, nil
}

func (rec *Recording) add(l *recordLine, n int) error {
	switch l.Kind {
	case "run":
		if rec.header == nil {
			if l.State == nil {
				return fmt.Errorf("loop: recording line %d: run without a state", n)
			}
			if err := l.State.Validate(); err != nil {
				return fmt.Errorf("loop: recording line %d: %w", n, err)
			}
			rec.header = l
		}
		return nil
	case "llm", "tool", "end":
	default:
		return fmt.Errorf("loop: recording line %d: unknown kind %q", n, l.Kind)
	}
	if rec.header == nil || l.RunID != rec.header.RunID || rec.end != nil {
		return nil // another run's line, or after the end of ours
	}
	switch l.Kind {
	case "llm":
		if l.Response == nil {
			return fmt.Errorf("loop: recording line %d: llm line without a response", n)
		}
		rec.llm = append(rec.llm, l)
	case "tool":
		if l.Result == nil || l.CallID == "" {
			return fmt.Errorf("loop: recording line %d: tool line without a call id or result", n)
		}
		rec.tools[l.CallID] = l
	case "end":
		rec.end = l
	}
	return nil
}

// State returns a copy of the recorded starting state.
func (rec *Recording) State() *RunState { return rec.header.State.Clone() }

// ReplayOptions configures a replay. The zero value replays fully offline.
type ReplayOptions struct {
	// Tools, when set, are run for real ("model-only" replay): each result
	// is compared with the recorded one and a difference is a
	// *ReplayMismatch. When nil, recorded results are returned and no tool
	// runs (fully offline, no side effects).
	Tools *tool.Registry
	// Agent, when set, is the template for the replaying agent (policy,
	// hooks, tracer, checkpoint, parallelism). Its Provider, Tools, Model,
	// Bounds, Memory and Recorder are replaced by the recording's.
	Agent *Agent
}

// Replay replays the recording at path: see [Recording.Replay].
func Replay(ctx context.Context, path string, opts ReplayOptions) (*Result, error) {
	rec, err := OpenRecording(path)
	if err != nil {
		return nil, err
	}
	return rec.Replay(ctx, opts)
}

// Replay runs the recorded run again with the model's recorded responses
// (no network) and checks, at each step, that the loop sends the same
// requests, makes the same calls and reaches the same outcome. A
// divergence fails the run with a *RunError wrapping a *ReplayMismatch
// that names the step. It returns what the run returns.
func (rec *Recording) Replay(ctx context.Context, opts ReplayOptions) (*Result, error) {
	var a Agent
	if opts.Agent != nil {
		a = *opts.Agent
	}
	rp := &replayer{rec: rec, offline: opts.Tools == nil}
	a.Provider = rp
	a.Tools = opts.Tools
	if rp.offline {
		reg, err := rec.stubTools()
		if err != nil {
			return nil, err
		}
		a.Tools = reg
	}
	a.Model = rec.header.Model
	a.Bounds = Bounds{}
	if rec.header.Bounds != nil {
		a.Bounds = *rec.header.Bounds
	}
	if cm := rec.header.CodeMode; cm != nil {
		// The run offered run_program: the replay offers it too, so the
		// model is sent the same tools. Offline the program's recorded
		// result is given back and no program runs.
		runner := a.CodeMode.Runner
		if rp.offline {
			runner = offlinePrograms{}
		} else if runner == nil {
			return nil, fmt.Errorf("%w: the recorded run was in code mode (%s): replaying it with live tools needs ReplayOptions.Agent.CodeMode.Runner to run its programs", ErrCodeMode, cm.Mode)
		}
		a.CodeMode = codemode.Config{Mode: cm.Mode, MaxCalls: cm.MaxCalls, Runner: runner}
	} else {
		a.CodeMode = codemode.Config{}
	}
	a.Knowledge.Memory, a.Recorder, a.replay = nil, nil, rp
	return a.execute(ctx, rec.State(), true, nil)
}

// CodeMode is the recorded run's code mode (codemode.Off when it had none).
func (rec *Recording) CodeMode() codemode.Mode {
	if rec.header.CodeMode == nil {
		return codemode.Off
	}
	return rec.header.CodeMode.Mode
}

// offlinePrograms is the program runner of an offline replay, which
// answers run_program from the recording before any runner is asked.
type offlinePrograms struct{}

func (offlinePrograms) Run(context.Context, codemode.Program) (tool.Result, error) {
	return tool.Result{}, errors.New("loop: an offline replay runs no program")
}

// stubTools builds, from the recorded specs and flags, tools that are
// never called (offline replay answers from the recording) but give the
// model the same tool list and the guards the same flags.
func (rec *Recording) stubTools() (*tool.Registry, error) {
	reg := &tool.Registry{}
	for _, t := range rec.header.Tools {
		if err := reg.Add(stubTool{t}); err != nil {
			return nil, fmt.Errorf("loop: recording: %w", err)
		}
	}
	return reg, nil
}

// stubTool is a recorded tool: its spec and flags, no behaviour.
type stubTool struct{ rec recordedTool }

func (s stubTool) Spec() llm.ToolSpec { return s.rec.Spec }

func (s stubTool) Flags() tool.Flags { return s.rec.Flags }

func (s stubTool) Call(context.Context, tool.Call) (tool.Result, error) {
	return tool.Result{}, errors.New("loop: replay stub tool called outside a replay")
}

// replayer serves recorded responses and checks the replay against the
// recording. It is the Provider of a replaying agent.
type replayer struct {
	rec     *Recording
	offline bool
	mu      sync.Mutex
	next    int
}

func (p *replayer) Name() string { return "replay" }

func (p *replayer) Complete(_ context.Context, req *llm.Request) (*llm.Response, error) {
	p.mu.Lock()
	i := p.next
	p.next++
	p.mu.Unlock()
	if i >= len(p.rec.llm) {
		return nil, &ReplayMismatch{Step: i + 1, Kind: "llm", Detail: fmt.Sprintf("the recording has %d model call(s); the replay asked for one more", len(p.rec.llm))}
	}
	l := p.rec.llm[i]
	if got := toolNames(req.Tools); !slices.Equal(got, l.ToolNames) {
		return nil, &ReplayMismatch{Step: l.Step, Kind: "llm", Detail: fmt.Sprintf("tools offered to the model are %v; the recording has %v", got, l.ToolNames)}
	}
	if len(req.Messages) != l.Messages {
		return nil, &ReplayMismatch{Step: l.Step, Kind: "llm", Detail: fmt.Sprintf("%d messages sent to the model; the recording has %d", len(req.Messages), l.Messages)}
	}
	for j, m := range req.Messages {
		if j < len(l.MessageDigests) && messageDigest(m, p.rec.header.Redacted) != l.MessageDigests[j] {
			return nil, &ReplayMismatch{Step: l.Step, Kind: "llm", Detail: fmt.Sprintf("message %d (%s) sent to the model differs from the recording: %q", j, m.Role, trace.Preview(messagePreview(m), 120))}
		}
	}
	resp := *l.Response
	resp.Message = l.Response.Message.Clone()
	return &resp, nil
}

// block returns the block of retrieved passages the next recorded model
// call was sent, and whether it held untrusted passages.
func (p *replayer) block() (string, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.next >= len(p.rec.llm) {
		return "", false
	}
	l := p.rec.llm[p.next]
	return l.Retrieved, l.RetrievedUntrusted
}

func (p *replayer) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.StreamEvent, error] {
	return llm.StreamFromComplete(ctx, req, p.Complete)
}

func messagePreview(m llm.Message) string {
	if t := m.Text(); t != "" {
		return t
	}
	for _, r := range m.ToolResults() {
		return r.Content
	}
	for _, c := range m.ToolCalls() {
		return c.Name + string(c.Arguments)
	}
	return ""
}

// recorded returns the recorded execution of call c, checking that it is
// the same call.
func (p *replayer) recorded(step int, c llm.ToolCall) (*recordLine, error) {
	l, ok := p.rec.tools[c.ID]
	if !ok {
		return nil, &ReplayMismatch{Step: step, Kind: "tool", CallID: c.ID, Detail: fmt.Sprintf("`%s` ran, but the recording has no execution of this call", c.Name)}
	}
	if l.Name != c.Name {
		return nil, &ReplayMismatch{Step: step, Kind: "tool", CallID: c.ID, Detail: fmt.Sprintf("the call is to `%s`; the recording has `%s`", c.Name, l.Name)}
	}
	args := c.Arguments
	if p.rec.header.Redacted {
		args = trace.RedactJSON(args)
	}
	if canonicalJSON(args) != canonicalJSON(l.Arguments) {
		return nil, &ReplayMismatch{Step: step, Kind: "tool", CallID: c.ID, Detail: fmt.Sprintf("arguments %s differ from the recorded %s", args, l.Arguments)}
	}
	return l, nil
}

// offlineResult answers a call from the recording.
func (p *replayer) offlineResult(step int, c llm.ToolCall) (rawResult, error) {
	l, err := p.recorded(step, c)
	if err != nil {
		return rawResult{}, err
	}
	r := l.Result
	return rawResult{text: r.Content, isError: r.IsError, infra: r.Infrastructure, untrusted: r.Untrusted, refusal: refusal.Kind(r.Refusal)}, nil
}

// checkTool compares a result produced for real (model-only replay) with
// the recorded one.
func (p *replayer) checkTool(step int, c llm.ToolCall, raw rawResult) error {
	if p.offline {
		return nil
	}
	l, err := p.recorded(step, c)
	if err != nil {
		return err
	}
	got := raw.text
	if p.rec.header.Redacted {
		got = trace.Redact(got)
	}
	if got != l.Result.Content || raw.isError != l.Result.IsError {
		return &ReplayMismatch{Step: step, Kind: "tool", CallID: c.ID, Detail: fmt.Sprintf("`%s` returned %q (error=%v); the recording has %q (error=%v)",
			c.Name, trace.Preview(got, 120), raw.isError, trace.Preview(l.Result.Content, 120), l.Result.IsError)}
	}
	return nil
}

// finish compares the outcome with the recorded one.
func (p *replayer) finish(r *runner, res *Result) error {
	end := p.rec.end
	if end == nil {
		return nil // the recorded run never ended (crash): nothing to compare
	}
	if res.StopReason != end.StopReason || res.Steps != end.Steps {
		return &ReplayMismatch{Step: res.Steps, Kind: "end", Detail: fmt.Sprintf("the run stopped with %s after %d step(s); the recording with %s after %d", res.StopReason, res.Steps, end.StopReason, end.Steps)}
	}
	if d := transcriptDigest(res.Messages, p.rec.header.Redacted); d != end.TranscriptDigest {
		return &ReplayMismatch{Step: res.Steps, Kind: "end", Detail: "the final transcript differs from the recording"}
	}
	return nil
}

// RecordedOutcome is how a recorded run ended, for turning a recording
// into a regression case.
type RecordedOutcome struct {
	// Ended is false when the recording stops before the run ended (the
	// process crashed); the other fields are then zero.
	Ended      bool
	StopReason StopReason
	Steps      int
	Output     string
	// ToolCalls names the tool calls the model made, in order.
	ToolCalls []string
}

// Outcome returns how the recorded run ended.
func (rec *Recording) Outcome() RecordedOutcome {
	var o RecordedOutcome
	for _, l := range rec.llm {
		for _, c := range l.Response.Message.ToolCalls() {
			o.ToolCalls = append(o.ToolCalls, c.Name)
		}
	}
	if rec.end == nil {
		return RecordedOutcome{}
	}
	o.Ended, o.StopReason, o.Steps, o.Output = true, rec.end.StopReason, rec.end.Steps, rec.end.Output
	return o
}
