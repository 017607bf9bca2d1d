package synth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/tool"
)

// createToolName is the meta-tool's name.
const createToolName = "create_tool"

// DefaultCreateBudget is how many tools create_tool may try to build in one
// run by default.
const DefaultCreateBudget = 3

// CreateToolOptions configure a create_tool instance. The zero value
// allows DefaultCreateBudget creations in the Builder's default language.
type CreateToolOptions struct {
	// Budget is how many times create_tool may build a tool in this run,
	// accepted or not (so a model cannot loop on a failing design); 0
	// means DefaultCreateBudget.
	Budget int
	// Language is the language of the tools it writes; "" means the
	// Builder's default. The model may ask for another offered language.
	Language string
}

// CreateTool is the create_tool meta-tool of one run: the model describes a
// capability it lacks, a second model (the Builder's writer) writes the
// tool, and once it passes its self-tests in the sandbox it is added to the
// run's registry, where the model can call it from its next step.
//
// The budget is per instance, and an instance belongs to one run: make one
// with [Builder.CreateTool] for each run, with the registry that run uses,
// and Close it when the run ends to unload the tools it created. (Sharing
// one instance between runs shares its budget and its registry.)
//
// A created tool never replaces a tool already in the registry (a host
// tool, or one created earlier): the registry refuses duplicates and
// create_tool reports the conflict to the model. Tools are quarantined: no
// grants unless the Builder's ceiling allows those asked for. Accepted
// tools are staged for review like synthesized ones, unless the Builder's
// staging is off.
type CreateTool struct {
	b    *Builder
	reg  *tool.Registry
	opts CreateToolOptions
	spec llm.ToolSpec

	mu      sync.Mutex
	used    int
	created []*Tool
}

var _ tool.Tool = (*CreateTool)(nil)

// CreateTool returns a create_tool for one run, registering the tools it
// creates in reg (the registry the run's agent uses). Add the returned tool
// to reg to offer it to the model.
func (b *Builder) CreateTool(reg *tool.Registry, opts CreateToolOptions) *CreateTool {
	if opts.Budget == 0 {
		opts.Budget = DefaultCreateBudget
	}
	langs := b.Languages()
	schema := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"capability":   map[string]any{"type": "string", "description": "what the new tool must do: inputs, output, rules, edge cases"},
			"name":         map[string]any{"type": "string", "description": "a snake_case name for the tool (optional)"},
			"input_schema": map[string]any{"type": "object", "description": "the JSON Schema of its arguments (optional)"},
			"language":     map[string]any{"type": "string", "enum": langs, "description": "the language to write it in (optional)"},
			"capabilities": map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "description": "grants it needs, e.g. net:api.example.com (optional; capped by the host)"},
		},
		"required":             []string{"capability"},
		"additionalProperties": false,
	}
	return &CreateTool{b: b, reg: reg, opts: opts, spec: llm.ToolSpec{
		Name: createToolName,
		Description: fmt.Sprintf("Create a new tool when none of your tools can do a step: describe the capability and a tool is written, tested in a sandbox and added to your tools for the rest of this run. "+
			"The tool computes from its arguments only (no files, network or environment unless the host allows it). At most %d creations per run; reuse tools you already have.", opts.Budget),
		InputSchema: mustJSON(schema),
	}}
}

// Spec returns create_tool's spec.
func (c *CreateTool) Spec() llm.ToolSpec { return c.spec }

type createArgs struct {
	Capability   string          `json:"capability"`
	Name         string          `json:"name"`
	InputSchema  json.RawMessage `json:"input_schema"`
	Language     string          `json:"language"`
	Capabilities []string        `json:"capabilities"`
}

// Call builds the tool the model asked for and registers it. Every failure
// the model can act on (budget spent, a refused tool, a name taken) is an
// error Result; the error is non-nil only when the infrastructure failed.
func (c *CreateTool) Call(ctx context.Context, call tool.Call) (tool.Result, error) {
	var a createArgs
	if err := json.Unmarshal(call.Arguments, &a); err != nil || a.Capability == "" {
		return tool.Errorf("create_tool needs {\"capability\": \"what the tool must do\"}"), nil
	}
	lang := a.Language
	if lang == "" {
		lang = c.opts.Language
	}
	if _, err := c.b.backend(lang); err != nil {
		return tool.Errorf("%v", err), nil
	}
	if a.Name != "" {
		if n := SanitizeName(a.Name); n != "" && c.taken(n) {
			return tool.Errorf("a tool named %s already exists and cannot be replaced; choose another name", n), nil
		}
	}
	if !c.spend() {
		return tool.Errorf("%v (%d per run): reuse a tool you have or finish the task with what is available", ErrBudget, c.opts.Budget), nil
	}
	t, err := c.b.Build(ctx, Request{
		Capability: a.Capability, Name: a.Name, InputSchema: a.InputSchema,
		Capabilities: a.Capabilities, Language: lang, reserved: c.taken,
	})
	var rej *RejectError
	if errors.As(err, &rej) {
		return tool.Errorf("the tool was not created: %s", rej.Error()), nil
	}
	if err != nil {
		return tool.Errorf("the tool could not be created: %v", err), err
	}
	start := time.Now()
	if err := c.reg.Add(t); err != nil {
		_ = t.Close(context.WithoutCancel(ctx))
		c.b.emit(Event{Stage: StageRegister, Tool: t.Name(), Language: t.Language(), Status: StatusRejected, Error: err.Error(), Duration: time.Since(start)})
		if errors.Is(err, tool.ErrDuplicate) {
			return tool.Errorf("a tool named %s already exists and cannot be replaced; choose another name", t.Name()), nil
		}
		return tool.Errorf("the tool could not be registered: %v", err), nil
	}
	c.mu.Lock()
	c.created = append(c.created, t)
	c.mu.Unlock()
	c.b.emit(Event{Stage: StageRegister, Tool: t.Name(), Language: t.Language(), Status: StatusOK, SHA256: t.SHA256(), Duration: time.Since(start)})
	d := t.Draft()
	desc := map[string]any{
		"name": d.Name, "description": d.Description, "input_schema": d.InputSchema, "language": t.Language(),
	}
	if len(d.Capabilities) > 0 {
		desc["capabilities"] = d.Capabilities
	}
	out := map[string]any{"registered": true, "tool": desc, "note": "call it by name from your next step"}
	if !c.b.opts.NoStaging {
		// The tool works for this run either way: failing to stage it for
		// review must not take it away.
		if st, err := c.b.Stage(ctx, t, &Provenance{Goal: a.Capability}); err != nil {
			out["staging_error"] = err.Error()
		} else {
			out["staged_for_review"] = st.Stem
		}
	}
	return tool.JSON(out)
}

// spend takes one unit of the budget, false when none is left.
func (c *CreateTool) spend() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.used >= c.opts.Budget {
		return false
	}
	c.used++
	return true
}

func (c *CreateTool) taken(name string) bool {
	_, ok := c.reg.Get(name)
	return ok
}

// Used returns how many creations this run has spent.
func (c *CreateTool) Used() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.used
}

// Created returns the tools created and registered so far.
func (c *CreateTool) Created() []*Tool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.created)
}

// Close removes the tools it created from the registry and unloads them.
func (c *CreateTool) Close(ctx context.Context) error {
	c.mu.Lock()
	created := c.created
	c.created = nil
	c.mu.Unlock()
	var errs []error
	for _, t := range created {
		if cur, ok := c.reg.Get(t.Name()); ok && cur == tool.Tool(t) {
			c.reg.Remove(t.Name())
		}
		errs = append(errs, t.Close(ctx))
	}
	return errors.Join(errs...)
}
