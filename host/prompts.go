package host

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// Prompt is one prompt a module offers (hyper-mcp v2's list_prompts), in
// MCP's Prompt shape.
type Prompt struct {
	Name        string           `json:"name"`
	Title       string           `json:"title,omitempty"`
	Description string           `json:"description,omitempty"`
	Arguments   []PromptArgument `json:"arguments,omitempty"`
}

// PromptArgument is an argument a [Prompt] takes.
type PromptArgument struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	Required    bool   `json:"required,omitempty"`
}

// Resource is one resource a module offers (hyper-mcp v2's
// list_resources), in MCP's Resource shape.
type Resource struct {
	URI         string `json:"uri"`
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	MIMEType    string `json:"mimeType,omitempty"`
	Size        int64  `json:"size,omitempty"`
}

// ResourceTemplate is a family of resources a module offers by URI
// template (hyper-mcp v2's list_resource_templates).
type ResourceTemplate struct {
	URITemplate string `json:"uriTemplate"`
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	MIMEType    string `json:"mimeType,omitempty"`
}

// The bounds of what a module may list: each list is read at load, with
// describe, and kept.
const (
	maxPrompts   = 1024
	maxResources = 4096
)

// Prompts returns the module's prompts; none for a module that is not a
// hyper-mcp v2 plugin exporting list_prompts.
func (l *Loaded) Prompts() []Prompt { return append([]Prompt(nil), l.Describe().Prompts...) }

// Resources returns the module's resources.
func (l *Loaded) Resources() []Resource { return append([]Resource(nil), l.Describe().Resources...) }

// ResourceTemplates returns the module's resource templates.
func (l *Loaded) ResourceTemplates() []ResourceTemplate {
	return append([]ResourceTemplate(nil), l.Describe().ResourceTemplates...)
}

// GetPrompt renders the module's prompt name with args (get_prompt): MCP's
// GetPromptResult, as JSON. It runs as a call does, with the module's
// grants and limits.
func (l *Loaded) GetPrompt(ctx context.Context, name string, args map[string]string) (json.RawMessage, error) {
	return l.request(ctx, "get_prompt", map[string]any{"name": name, "arguments": args})
}

// ReadResource reads the module's resource uri (read_resource): MCP's
// ReadResourceResult, as JSON.
func (l *Loaded) ReadResource(ctx context.Context, uri string) (json.RawMessage, error) {
	return l.request(ctx, "read_resource", map[string]any{"uri": uri})
}

// Complete asks the module to complete an argument (complete): req is
// MCP's CompleteRequest params ({"ref":..., "argument":{"name","value"}}),
// the answer MCP's CompleteResult, as JSON. A ref's type is passed as
// hyper-mcp does, without its "ref/" prefix.
func (l *Loaded) Complete(ctx context.Context, req json.RawMessage) (json.RawMessage, error) {
	var r map[string]any
	if err := json.Unmarshal(req, &r); err != nil {
		return nil, fmt.Errorf("host: module %q: complete: %w", l.name, err)
	}
	if ref, ok := r["ref"].(map[string]any); ok {
		if t, ok := ref["type"].(string); ok && len(t) > 4 && t[:4] == "ref/" {
			ref["type"] = t[4:]
		}
	}
	return l.request(ctx, "complete", r)
}

// ExportError is a module's failure in a request that is not a tool call
// (a prompt, a resource, a completion).
type ExportError struct {
	Module, Export string
	Message        string // what the module said, or why the host stopped it
}

func (e *ExportError) Error() string {
	return fmt.Sprintf("host: module %q: %s: %s", e.Module, e.Export, e.Message)
}

// request runs the v2 export with {"request": req, "context": ...} in an
// instance of the module, as a tool call runs, and returns its output,
// which must be a JSON object.
func (l *Loaded) request(ctx context.Context, export string, req any) (json.RawMessage, error) {
	if !l.v2() || l.remote != nil {
		return nil, &ExportError{Module: l.name, Export: export, Message: "the module is not a hyper-mcp v2 plugin loaded in this process"}
	}
	if l.entry.mod.ExportedFunctions()[export] == nil {
		return nil, &ExportError{Module: l.name, Export: export, Message: "the module does not export it"}
	}
	body, err := json.Marshal(map[string]any{"request": req, "context": map[string]any{"id": 0, "_meta": map[string]any{}}})
	if err != nil {
		return nil, err
	}
	if err := l.enter(); err != nil {
		return nil, err
	}
	defer l.leave()
	rec := CallRecord{Start: time.Now(), Module: l.name, SHA256: l.sha, ABI: l.abi, Tool: export}
	defer func() {
		rec.Duration = time.Since(rec.Start)
		if fn := l.h.opts.OnCall; fn != nil {
			fn(ctx, rec)
		}
	}()
	if err := l.h.enterCall(ctx); err != nil { // as an outermost tool call does
		rec.Outcome = OutcomeCancelled
		return nil, err
	}
	defer l.h.leaveCall()
	inst, pooled, err := l.acquire(ctx)
	rec.Pooled = pooled
	if err != nil {
		rec.Outcome = OutcomeFailed
		return nil, err
	}
	out, failure, err := inst.runExport(ctx, export, export, callInput{body})
	rec.Used, rec.Denied, rec.MemoryPeak = inst.usedGrants(), inst.call.denied, inst.call.peak
	var res json.RawMessage
	if err == nil && failure == "" {
		res = bytes.Clone(out)
		if inst.call.listChanged {
			l.listsChanged(ctx, inst)
		}
	}
	l.releaseInstance(inst, err == nil && failure == "")
	switch {
	case err != nil:
		rec.Outcome, rec.Error = OutcomeFailed, err.Error()
		return nil, &ExportError{Module: l.name, Export: export, Message: err.Error()}
	case failure != "":
		rec.Outcome, rec.Error = OutcomeToolError, failure
		return nil, &ExportError{Module: l.name, Export: export, Message: failure}
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(res, &obj); err != nil {
		rec.Outcome = OutcomeBadOutput
		return nil, &ExportError{Module: l.name, Export: export, Message: "its answer is not a JSON object: " + err.Error()}
	}
	rec.Outcome, rec.OutputBytes = OutcomeOK, len(res)
	return res, nil
}

// v2 reports whether the module is a hyper-mcp v2 plugin.
func (l *Loaded) v2() bool { return l.entry != nil && l.entry.v2 }

// describeV2 reads a hyper-mcp v2 plugin's lists into one describe
// document, each list export run as describe is (no capabilities,
// describe's limits) in an instance of its own.
func (l *Loaded) describeV2(ctx context.Context) ([]byte, error) {
	return l.v2Document(func(export string) ([]byte, error) { return l.describeExport(ctx, export) })
}

// v2Document merges a v2 plugin's lists into one describe document:
// list_tools, then list_prompts, list_resources and
// list_resource_templates when exported, each read by run.
func (l *Loaded) v2Document(run func(export string) ([]byte, error)) ([]byte, error) {
	doc := map[string]json.RawMessage{}
	for _, c := range v2Lists {
		if c.export != "list_tools" && l.entry.mod.ExportedFunctions()[c.export] == nil {
			continue
		}
		out, err := run(c.export)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.export, err)
		}
		var list map[string]json.RawMessage
		if err := json.Unmarshal(out, &list); err != nil {
			return nil, fmt.Errorf("%s: not a JSON object: %v", c.export, err)
		}
		if v, ok := list[c.key]; ok {
			doc[c.key] = v
		}
	}
	return json.Marshal(doc)
}
