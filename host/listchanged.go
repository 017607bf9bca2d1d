package host

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// statefulImports are the imports that make a module stateful: it says its
// lists changed, so they depend on what its instance remembers.
var statefulImports = map[string]bool{
	userModule + ".notify_tool_list_changed":     true,
	userModule + ".notify_prompt_list_changed":   true,
	userModule + ".notify_resource_list_changed": true,
}

// singleInstance serves a stateful module: one instance, one call at a
// time, as hyper-mcp runs every plugin.
type singleInstance struct {
	mu   sync.Mutex
	inst *instance
}

// redescribe reads the module's lists again in inst, the instance whose
// call said they changed (its memory holds them), with no capabilities,
// and makes them the module's. The Dir that loaded the module, if any, is
// told and publishes the change.
func (l *Loaded) redescribe(ctx context.Context, inst *instance) error {
	inst.call.listChanged = false
	inst.describing = true
	defer func() { inst.describing = false }()
	fn := inst.fn
	defer func() { inst.fn = fn }()
	limits := inst.limits
	inst.limits.Timeout = min(limits.Timeout, describeTimeout)
	inst.limits.Output = MaxDescribe
	defer func() { inst.limits = limits }()

	// One export run in inst, where the module's lists live, by the
	// deadline of the call that said they changed: the re-read is part of
	// that call, and a call takes one time limit in all.
	callDeadline := inst.runDeadline
	run := func(export string, input callInput) ([]byte, error) {
		inst.fn = inst.mod.ExportedFunction(export)
		if d := time.Now().Add(inst.limits.Timeout); callDeadline.IsZero() || d.Before(callDeadline) {
			inst.deadline = d
		} else {
			inst.deadline = callDeadline
		}
		out, failure, err := inst.run(ctx, "describe", input)
		if err == nil && failure != "" {
			err = errors.New(failure)
		}
		if err != nil {
			return nil, err
		}
		return append([]byte(nil), out...), nil
	}
	var (
		raw []byte
		err error
	)
	if l.entry.v2 {
		raw, err = l.v2Document(func(export string) ([]byte, error) { return run(export, callInput{v2ListInput}) })
	} else {
		raw, err = run("describe", callInput{})
	}
	if err != nil {
		return err
	}
	d, in, out, err := parseDescription(raw)
	if err != nil {
		return err
	}
	// Parsing and compiling the lists is part of the re-read too: lists
	// that took the call past its deadline are not applied (a module
	// flipping between two lists of 15 000 tools made 100 ms calls take
	// 3 s; found by attacking our own sandbox).
	if !callDeadline.IsZero() && time.Now().After(callDeadline) {
		return fmt.Errorf("reading and compiling its lists took past the call's deadline: %w", timeLimitErr(limits.Timeout))
	}
	if err := l.setTools(described{d, in, out}); err != nil {
		return err
	}
	l.mu.Lock()
	notify := l.onListChanged
	l.mu.Unlock()
	if notify != nil {
		notify()
	}
	return nil
}

// OnListChanged makes f run after a call of the module said its lists
// changed and they were read again (a stateful module's tools, prompts or
// resources), so whoever serves them can publish the change; nil stops
// it. The plugins directory sets it for the modules it loads.
func (l *Loaded) OnListChanged(f func()) {
	l.mu.Lock()
	l.onListChanged = f
	l.mu.Unlock()
}

// listsChanged re-reads the lists of a module whose call said they
// changed; a failure leaves the old lists and is logged.
func (l *Loaded) listsChanged(ctx context.Context, inst *instance) {
	if err := l.redescribe(ctx, inst); err != nil {
		if lg := l.h.opts.Logger; lg != nil {
			lg.Warn("the module said its tools changed, but reading them again failed: the old ones stay", "module", l.name, "error", err)
		}
	}
}

// v2Lists are a hyper-mcp v2 plugin's list exports and the member of the
// describe document each fills.
var v2Lists = []struct{ export, key string }{
	{"list_tools", "tools"}, {"list_prompts", "prompts"}, {"list_resources", "resources"}, {"list_resource_templates", "resourceTemplates"},
}
