package synth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/autoagent-go/autoagent/host"
	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/manifest"
	"github.com/autoagent-go/autoagent/tool"
)

// Request asks the writer model for one tool.
type Request struct {
	// Capability says what the tool must do, in the caller's words.
	Capability string
	// Name forces the tool's name (sanitised with [SanitizeName]); ""
	// lets the model choose.
	Name string
	// InputSchema forces the tool's input schema; nil lets the model
	// choose.
	InputSchema json.RawMessage
	// Capabilities forces the grants the tool asks for; nil lets the
	// model ask (either way they are capped by Options.Ceiling).
	Capabilities []string
	// Language is the tool's language; "" means Options.Language.
	Language string

	// attempt numbers Synthesize's attempts in events.
	attempt int
	// history is the conversation of earlier attempts (the writer's
	// answers and the feedback on each), appended after the request.
	history []llm.Message
	// reserved are names the tool may not take.
	reserved func(name string) bool
}

// reservedNames can never name a generated tool.
var reservedNames = map[string]bool{createToolName: true, checkTool: true}

// Build asks the writer model for a tool, screens the source, packages it,
// loads it quarantined and runs its self-tests in the sandbox. The
// returned Tool is loaded but registered nowhere.
//
// A tool that fails any step is refused with a *RejectError whose text is
// written for the model; any other error means the infrastructure failed
// (the writer's provider, a missing engine or toolchain, ctx).
func (b *Builder) Build(ctx context.Context, req Request) (*Tool, error) {
	be, err := b.backend(req.Language)
	if err != nil {
		return nil, err
	}
	lang := be.Language()
	js, isJS := be.(*JavaScript)
	if isJS {
		if err := b.warmEngine(ctx, js, false); err != nil {
			return nil, err
		}
	}
	draft, err := b.write(ctx, req, be)
	if err != nil {
		return nil, err
	}
	if caps := draft.Capabilities; isJS && (usesBridge(caps) || usesBridge(req.Capabilities)) {
		if err := b.warmEngine(ctx, js, true); err != nil {
			return nil, err
		}
	}
	ev := Event{Tool: draft.Name, Language: lang, Attempt: req.attempt}
	step := func(stage Stage, start time.Time, err error, detail string) error {
		e := ev
		e.Stage, e.Duration, e.Detail = stage, time.Since(start), detail
		e.Status = StatusOK
		var rej *RejectError
		switch {
		case errors.As(err, &rej):
			e.Status, e.Error = StatusRejected, rej.Reason
		case err != nil:
			e.Status, e.Error = StatusError, err.Error()
		}
		b.emit(e)
		return err
	}

	start := time.Now()
	grants, err := b.screen(draft, be, req)
	if step(StageScreen, start, err, "") != nil {
		return nil, err
	}

	start = time.Now()
	pkg, err := be.Build(ctx, draft.Spec, draft.Source)
	if err != nil {
		return nil, step(StageBuild, start, err, "")
	}
	if pkg.sha == "" {
		pkg.sha = manifest.Sum(pkg.Module)
	}
	ev.SHA256 = pkg.sha
	step(StageBuild, start, nil, fmt.Sprintf("%d bytes", len(pkg.Module)))

	start = time.Now()
	t, err := b.load(ctx, draft, lang, pkg, grants)
	if err != nil {
		return nil, step(StageLoad, start, err, "")
	}
	step(StageLoad, start, nil, "quarantined, grants: "+grantList(grants))

	start = time.Now()
	n, err := b.selfTest(ctx, t, draft.SelfTests)
	if err != nil {
		_ = t.Close(context.WithoutCancel(ctx))
		return nil, step(StageSelfTest, start, err, "")
	}
	step(StageSelfTest, start, nil, fmt.Sprintf("%d passed", n))
	return t, nil
}

// screen applies the caller's overrides and checks the draft: name,
// description, schema, grants, then the back-end's source screen.
func (b *Builder) screen(d *Draft, be Backend, req Request) ([]manifest.Grant, error) {
	name := d.Name
	if req.Name != "" {
		name = req.Name
	}
	d.Name = SanitizeName(name)
	switch {
	case d.Name == "":
		return nil, reject(StageScreen, "the tool name %q is empty or invalid; use snake_case letters and digits", name)
	case reservedNames[d.Name] || (req.reserved != nil && req.reserved(d.Name)):
		return nil, reject(StageScreen, "a tool named %s already exists and cannot be replaced; choose another name", d.Name)
	}
	if strings.TrimSpace(d.Description) == "" {
		d.Description = firstLine(req.Capability)
	}
	if req.InputSchema != nil {
		d.InputSchema = req.InputSchema
	}
	d.InputSchema = rawOrObject(d.InputSchema)
	if !rawIsObject(d.InputSchema) {
		return nil, reject(StageScreen, "input_schema must be a JSON Schema object")
	}
	var top struct {
		Type any `json:"type"`
	}
	if err := json.Unmarshal(d.InputSchema, &top); err != nil || top.Type != "object" {
		return nil, reject(StageScreen, `input_schema must have "type": "object": a tool's arguments are a JSON object`)
	}
	if _, err := tool.CompileSchema(d.InputSchema); err != nil {
		return nil, reject(StageScreen, "input_schema is not a valid JSON Schema: %v", err)
	}
	if req.Capabilities != nil {
		d.Capabilities = req.Capabilities
	}
	grants, err := capGrants(d.Capabilities, b.opts.Ceiling)
	if err != nil {
		return nil, err
	}
	if err := be.Screen(d.Source); err != nil {
		return nil, err
	}
	return grants, nil
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 200 {
		s = s[:200]
	}
	return s
}

// load loads the package quarantined: the capped grants, the builder's
// limits, and the probe describe document when the package has one, whose
// probe tool must pass before anything else runs.
func (b *Builder) load(ctx context.Context, d *Draft, lang string, pkg *Package, grants []manifest.Grant) (*Tool, error) {
	side := pkg.Sidecar
	if pkg.Probe != nil {
		side = pkg.Probe
	}
	l, err := b.opts.Host.Load(ctx, host.Module{
		Name: d.Name, Bytes: pkg.Module, Sidecar: side, Config: pkg.Config,
		Grants: grants, Limits: b.opts.Limits,
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, reject(StageLoad, "the module does not load: %v", err)
	}
	inner, ok := l.Tool(d.Name)
	if !ok {
		_ = l.Close(ctx)
		return nil, reject(StageLoad, "the module does not offer a tool named %s", d.Name)
	}
	t := &Tool{b: b, draft: *d, lang: lang, pkg: pkg, grants: grants, loaded: l, inner: inner}
	if err := b.track(t); err != nil {
		_ = l.Close(ctx)
		return nil, err
	}
	if pkg.ProbeTool != "" {
		probe, ok := l.Tool(pkg.ProbeTool)
		if !ok {
			_ = t.Close(ctx)
			return nil, fmt.Errorf("synth: the %s back-end's probe tool %s is missing", lang, pkg.ProbeTool)
		}
		res, err := probe.Call(ctx, tool.Call{Name: pkg.ProbeTool, Arguments: json.RawMessage(`{}`)})
		if err == nil && res.IsError {
			err = reject(StageBuild, "%s", res.Text())
		}
		if err != nil {
			_ = t.Close(context.WithoutCancel(ctx))
			return nil, err
		}
	}
	return t, nil
}

// write asks the writer model for a draft.
func (b *Builder) write(ctx context.Context, req Request, be Backend) (*Draft, error) {
	start := time.Now()
	llmReq := b.writerRequest(req, be)
	resp, err := b.opts.Writer.Complete(ctx, llmReq)
	ev := Event{Stage: StageWrite, Language: be.Language(), Attempt: req.attempt, Duration: time.Since(start)}
	if err != nil {
		ev.Status, ev.Error = StatusError, err.Error()
		b.emit(ev)
		return nil, fmt.Errorf("synth: the writer model failed: %w", err)
	}
	if resp.Usage != nil {
		u := resp.Usage.Normalize()
		ev.Usage = &u
		if b.opts.OnUsage != nil {
			b.opts.OnUsage(ctx, u)
		}
		if acc := usageFrom(ctx); acc != nil {
			acc.add(u)
		}
	}
	if acc := usageFrom(ctx); acc != nil {
		acc.answered(resp.Message)
	}
	d, err := parseDraft(resp.Message.Text())
	if err != nil {
		rej := reject(StageWrite, "the writer's answer could not be read: %v", err)
		ev.Status, ev.Error = StatusRejected, rej.Reason
		b.emit(ev)
		return nil, rej
	}
	ev.Tool, ev.Status = d.Name, StatusOK
	ev.Detail = fmt.Sprintf("%d bytes of source, %d self-tests", len(d.Source), len(d.SelfTests))
	b.emit(ev)
	return d, nil
}

func grantList(gs []manifest.Grant) string {
	if len(gs) == 0 {
		return "none"
	}
	s := make([]string, len(gs))
	for i, g := range gs {
		s[i] = g.String()
	}
	return strings.Join(s, ", ")
}
