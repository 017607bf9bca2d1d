package autoagent

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/autoagent-go/autoagent/host"
	"github.com/autoagent-go/autoagent/host/plugindir"
	"github.com/autoagent-go/autoagent/loop"
	"github.com/autoagent-go/autoagent/trace"
)

// SandboxCall is the trace event type of one sandboxed tool call, emitted by
// the observer TraceSandboxCalls returns.
const SandboxCall trace.Type = "sandbox_call"

// TraceSandboxCalls returns a host.Options.OnCall observer that writes every
// sandboxed call to tr as a SandboxCall event: tool, call id, module hash,
// grants held and used, refused actions, duration, memory peak and outcome.
// The host itself imports no tracing package; this is the bridge.
func TraceSandboxCalls(tr *trace.Tracer) func(context.Context, host.CallRecord) {
	if tr == nil {
		return nil
	}
	return func(ctx context.Context, r host.CallRecord) {
		attrs := map[string]string{
			"module":      r.Module,
			"sha256":      r.SHA256,
			"abi":         fmt.Sprint(r.ABI),
			"outcome":     fmt.Sprint(r.Outcome),
			"grants":      strings.Join(r.Grants, " "),
			"grants_used": strings.Join(r.Used, " "),
			"memory_peak": fmt.Sprint(r.MemoryPeak),
			"pooled":      fmt.Sprint(r.Pooled),
		}
		if len(r.Denied) > 0 {
			attrs["denied"] = strings.Join(r.Denied, "; ")
		}
		// The event joins the span of the tool call that ran the module
		// and the run it belongs to, as the loop set them in ctx.
		var runID string
		if info, ok := loop.CallInfoFrom(ctx); ok {
			runID = info.RunID
		}
		tr.Emit(trace.Event{
			Type:     SandboxCall,
			ParentID: trace.SpanFromContext(ctx),
			RunID:    runID,
			Payload: trace.Payload{
				Name:       r.Tool,
				CallID:     r.CallID,
				DurationMS: float64(r.Duration.Microseconds()) / 1000,
				Error:      r.Error,
				Attrs:      attrs,
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

// PluginsConfig says where the sandboxed tools of an agent come from.
type PluginsConfig struct {
	// Dir is the plugins directory; "" means ./plugins.
	Dir string
	// Manifest is the approvals file; "" means Dir/manifest.json.
	Manifest string
	// Quarantine loads modules nobody approved, with no grants at all.
	Quarantine bool
	// Tracer, when set, receives a SandboxCall event per sandboxed call.
	Tracer *trace.Tracer
}

// OpenPlugins starts a WASM host (HostOptions: traced, code mode gated by
// the run) and loads the plugins directory into it: approved modules run
// with their approved grants and limits, the others are reported in the
// snapshot. Close the returned Dir, then the Host.
func OpenPlugins(ctx context.Context, cfg PluginsConfig) (*host.Host, *plugindir.Dir, error) {
	h, err := host.New(ctx, HostOptions(cfg.Tracer))
	if err != nil {
		return nil, nil, err
	}
	d, err := plugindir.Open(ctx, h, plugindir.Options{Dir: cfg.Dir, Manifest: cfg.Manifest, Quarantine: cfg.Quarantine})
	if err != nil {
		h.Close(ctx)
		return nil, nil, err
	}
	return h, d, nil
}

// ReportPlugins tells a person, on w, which plugins of snap did not load
// (not approved, invalid) and which tool names conflict, with the command
// that helps.
func ReportPlugins(w io.Writer, snap *plugindir.Snapshot) {
	var pending, invalid []string
	for _, p := range snap.Plugins {
		switch p.Status {
		case plugindir.StatusPending:
			pending = append(pending, p.File)
		case plugindir.StatusInvalid:
			invalid = append(invalid, fmt.Sprintf("%s (%v)", p.File, p.Err))
		}
	}
	if len(pending) > 0 {
		fmt.Fprintf(w, "autoagent: %d plugin(s) not approved, not loaded: %s (see `autoagent tools list`, approve with `autoagent tools approve FILE`)\n", len(pending), strings.Join(pending, ", "))
	}
	for _, c := range snap.Conflicts {
		fmt.Fprintf(w, "autoagent: tool conflict: %v\n", c)
	}
	for _, i := range invalid {
		fmt.Fprintf(w, "autoagent: invalid plugin: %s\n", i)
	}
}
