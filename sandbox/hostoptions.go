package sandbox

import (
	"context"
	"slices"

	"github.com/autoagent-go/autoagent/host"
	"github.com/autoagent-go/autoagent/loop"
	"github.com/autoagent-go/autoagent/trace"
	"github.com/autoagent-go/autoagent/workspace"
)

// TraceSandboxCalls returns a host.Options.OnCall observer that writes every
// sandboxed call to tr as a trace.SandboxCall event: tool, call id, module
// hash, grants held and used, refused actions, duration, memory peak and
// outcome (a trace.Sandbox payload). A call made by a traced agent run goes
// to that run's tracer instead (trace.TracerFromContext), so a run traced
// apart (a served run's own trace) holds its sandbox calls. The host itself
// imports no tracing package; this is the bridge.
func TraceSandboxCalls(tr *trace.Tracer) func(context.Context, host.CallRecord) {
	if tr == nil {
		return nil
	}
	return func(ctx context.Context, r host.CallRecord) {
		// The event joins the span of the tool call that ran the module
		// and the run it belongs to, as the loop set them in ctx, in that
		// run's trace (a served run's own, which hands its events on).
		var runID string
		if info, ok := loop.CallInfoFrom(ctx); ok {
			runID = info.RunID
		}
		to := tr
		if runs := trace.TracerFromContext(ctx); runs != nil {
			to = runs
		}
		to.Emit(trace.Event{
			Type:     trace.SandboxCall,
			ParentID: trace.SpanFromContext(ctx),
			RunID:    runID,
			Payload: trace.Sandbox{
				Name:       r.Tool,
				CallID:     r.CallID,
				Error:      r.Error,
				DurationMS: float64(r.Duration.Microseconds()) / 1000,
				Module:     r.Module,
				SHA256:     r.SHA256,
				ABI:        string(r.ABI),
				Outcome:    string(r.Outcome),
				// Copies: a sink may keep or change what it is given,
				// and these may be the module's own.
				Grants:     slices.Clone(r.Grants),
				GrantsUsed: slices.Clone(r.Used),
				Denied:     slices.Clone(r.Denied),
				MemoryPeak: r.MemoryPeak,
				Pooled:     r.Pooled,
			},
		})
	}
}

// HostOptions are the options of a WASM host that serves an agent: each
// sandboxed call traced to tr (TraceSandboxCalls; nil: none), and code mode
// gated: a guest's tool_call of a host tool (tools: grants) goes through
// loop.CallNested, so it passes the run's loop guard, trifecta, policy and
// approvals, and taints the run as a call of the model would. Outside a
// run (tools call, mcp serve) such calls are refused.
func HostOptions(tr *trace.Tracer) host.Options {
	return host.Options{OnCall: TraceSandboxCalls(tr), CallTool: loop.CallNested}
}

// WorkspaceJournal is the host.Options.Journal of a set of workspaces:
// a module's fs.workspace grant on a directory changes it through the
// set's workspace of that directory (opened on first use), so what the
// module did is journaled, listed and undone like a Go tool's writes.
func WorkspaceJournal(set *workspace.Set) func(dir string) (host.Journal, error) {
	return func(dir string) (host.Journal, error) {
		w, err := set.Open(dir)
		if err != nil {
			return nil, err
		}
		return w, nil
	}
}
