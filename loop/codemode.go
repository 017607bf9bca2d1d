package loop

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/autoagent-go/autoagent/codemode"
	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/loop/refusal"
	"github.com/autoagent-go/autoagent/tool"
)

// Code mode (Agent.CodeMode): the model is offered run_program, whose
// program calls the run's tools. The program tool is the loop's own, like
// find_tools: its spec declares the tools offered at that step, and its
// call is a call of the model, through the gate like any other. The
// calls the program makes arrive through CallNested (the program engine's
// tool_call is wired to it), so each passes the gate again, is counted,
// recorded and replayed like any nested call; the loop adds only what is
// particular to programs: a program may call only the tools declared to
// it, never run_program, and at most CodeMode.MaxCalls of them.

// ErrCodeMode is wrapped by the error of a run whose code mode cannot work:
// an unknown mode, no runner, a tool of the registry named run_program.
var ErrCodeMode = errors.New("loop: code mode")

// checkCodeMode validates the agent's code mode before a run starts.
func (a *Agent) checkCodeMode() error {
	cm := a.CodeMode
	switch cm.Mode {
	case codemode.Off:
		return nil
	case codemode.Also, codemode.Only:
	default:
		return fmt.Errorf("%w: mode %q: want codemode.Off, Also or Only", ErrCodeMode, cm.Mode)
	}
	if cm.Runner == nil {
		return fmt.Errorf("%w: mode %s needs a Runner to run programs (jsprogram.New makes one)", ErrCodeMode, cm.Mode)
	}
	if cm.MaxCalls < 0 {
		return fmt.Errorf("%w: MaxCalls is %d; 0 means the default (%d)", ErrCodeMode, cm.MaxCalls, codemode.DefaultMaxCalls)
	}
	if a.Tools != nil {
		if _, ok := a.Tools.Get(codemode.ToolName); ok {
			return fmt.Errorf("%w: the agent has a tool named %s, the name of code mode's program tool; rename it or switch code mode off", ErrCodeMode, codemode.ToolName)
		}
	}
	return nil
}

// checkResumedProgram refuses to resume a turn whose run_program call has
// no result yet (paused for a decision, or stopped mid-turn) with code
// mode off, or without the program's language: the program would not run
// again, and the calls it awaits a decision on would never be made.
func (a *Agent) checkResumedProgram(st *RunState) error {
	for i := len(st.Messages) - 1; i >= 0; i-- {
		m := st.Messages[i]
		if m.Role != llm.RoleAssistant {
			continue
		}
		answered := map[string]bool{}
		for _, later := range st.Messages[i+1:] {
			for _, r := range later.ToolResults() {
				answered[r.CallID] = true
			}
		}
		for _, r := range st.Completed {
			answered[r.CallID] = true
		}
		for _, c := range m.ToolCalls() {
			if c.Name != codemode.ToolName || answered[c.ID] {
				continue
			}
			if a.CodeMode.Mode == codemode.Off {
				return fmt.Errorf("%w: the turn being resumed ran a program (%s %s), so the run must resume with code mode on (the mode it ran with: also or only)", ErrCodeMode, codemode.ToolName, c.ID)
			}
			var in codemode.Input
			if json.Unmarshal(c.Arguments, &in) != nil {
				continue // the call is refused as it was, whatever the runner
			}
			offered := codemode.Languages(a.CodeMode.Runner)
			if lang := codemode.Language(in.Language); in.Language != "" && !slices.Contains(offered, lang) {
				return fmt.Errorf("%w: the turn being resumed ran a program in %s (%s %s), so the run must resume offering %s (offered now: %s)", ErrCodeMode, lang, codemode.ToolName, c.ID, lang, strings.Join(offered, ", "))
			}
		}
		return nil
	}
	return nil
}

// codeMode reports whether the run offers run_program.
func (r *runner) codeMode() bool { return r.a.CodeMode.Mode != codemode.Off }

// offeredSpecs is what the model is offered at this step: the registry's
// tools, or find_tools and the tools found so far; then, in code mode,
// run_program declaring them (alone in mode only, with find_tools when
// the run searches).
func (r *runner) offeredSpecs() []llm.ToolSpec {
	specs := r.offered()
	if !r.codeMode() {
		return specs
	}
	prog := r.programSpec()
	if r.a.CodeMode.Mode == codemode.Only {
		if r.search != nil {
			return []llm.ToolSpec{findToolsSpec, prog}
		}
		return []llm.ToolSpec{prog}
	}
	return append(slices.Clip(specs), prog)
}

// offered are the registry's tools the model is offered at this step:
// all, or find_tools and those found so far.
func (r *runner) offered() []llm.ToolSpec {
	if r.search != nil {
		return r.search.offered()
	}
	return r.specs
}

// declared are the tools a program may call: those offered (revealed, with
// tool search), without find_tools.
func (r *runner) declared(offered []llm.ToolSpec) []llm.ToolSpec {
	if r.search == nil {
		return offered
	}
	out := make([]llm.ToolSpec, 0, len(offered))
	for _, sp := range offered {
		if sp.Name != findToolsName {
			out = append(out, sp)
		}
	}
	return out
}

// declaredNames are the names of the tools a program may call now.
func (r *runner) declaredNames() []string {
	specs := r.declared(r.offered())
	names := make([]string, len(specs))
	for i, sp := range specs {
		names[i] = sp.Name
	}
	return names
}

// modelRefusal is why the model may not call name directly in code mode
// only (the zero Refusal when it may): its tools are called from programs.
func (r *runner) modelRefusal(name string) refusal.Refusal {
	if r.a.CodeMode.Mode != codemode.Only || name == codemode.ToolName || name == findToolsName {
		return refusal.Refusal{}
	}
	return refusal.New(refusal.NotOffered, "`%s` is called from programs in this run: call %s with a program that does `await tools.%s(args)`.", name, codemode.ToolName, name)
}

// nestedRefusal is why a call a tool makes through CallNested may not run
// because of code mode (the zero Refusal when it may): run_program is the model's alone,
// and a program calls only the tools declared to it, at most MaxCalls.
func (r *runner) nestedRefusal(cc *callCtx, name string, n int32) refusal.Refusal {
	if name == codemode.ToolName && r.codeMode() {
		return refusal.New(refusal.NotAllowed, "%s runs the model's programs; a program or a tool cannot start one.", codemode.ToolName)
	}
	if !cc.program {
		return refusal.Refusal{}
	}
	if m := r.a.CodeMode.MaxCalls; int(n) > orDefault(m, codemode.DefaultMaxCalls) {
		return refusal.New(refusal.ProgramCallLimit, "a program may make %d tool calls and this one has made them; `%s` was not run. Do the rest in another step.", orDefault(m, codemode.DefaultMaxCalls), name)
	}
	if r.search != nil && !r.search.isRevealed(name) {
		return notOfferedMessage(name)
	}
	return refusal.Refusal{}
}

// orDefault is v, or def when v is 0.
func orDefault(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

// programTool is run_program: it runs the model's program with the
// agent's runner, in the context of its call, so the program's calls
// reach CallNested as calls of this one.
type programTool struct{ r *runner }

func (t programTool) Spec() llm.ToolSpec { return t.r.programSpec() }

func (r *runner) programSpec() llm.ToolSpec {
	return codemode.SpecFor(r.declared(r.offered()), r.search != nil, codemode.Languages(r.a.CodeMode.Runner))
}

func (t programTool) Call(ctx context.Context, c tool.Call) (tool.Result, error) {
	var in codemode.Input
	dec := json.NewDecoder(bytes.NewReader(c.Arguments))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return tool.Errorf(`%s needs {"code": "..."} (the body of an async JavaScript function), optionally "language": "javascript": %v`, codemode.ToolName, err), nil
	}
	return t.r.a.CodeMode.Runner.Run(ctx, codemode.Program{Code: in.Code, Language: in.Language, Tools: t.r.declaredNames()})
}
