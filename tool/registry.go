package tool

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/autoagent-go/autoagent/llm"
)

// ErrDuplicate is wrapped by the error [Registry.Add] returns when a tool of
// the same name is already registered.
var ErrDuplicate = errors.New("tool: a tool with this name is already registered")

// Registry holds the tools of an agent, in registration order. It is safe
// for concurrent use; calls are not serialised.
type Registry struct {
	mu    sync.RWMutex
	tools map[string]Tool
	order []string
}

// NewRegistry returns a registry holding tools; it fails on a duplicate or
// invalid name.
func NewRegistry(tools ...Tool) (*Registry, error) {
	r := &Registry{}
	for _, t := range tools {
		if err := r.Add(t); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// Add registers t. It fails when t's name is invalid or already taken: a
// tool is never silently replaced.
func (r *Registry) Add(t Tool) error {
	name := t.Spec().Name
	if !ValidName(name) {
		return fmt.Errorf("tool: invalid name %q: want 1-64 letters, digits, '_' or '-'", name)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.tools[name]; ok {
		return fmt.Errorf("%w: %s", ErrDuplicate, name)
	}
	if r.tools == nil {
		r.tools = make(map[string]Tool)
	}
	r.tools[name] = t
	r.order = append(r.order, name)
	return nil
}

// Replace registers t, replacing any tool of the same name in place.
func (r *Registry) Replace(t Tool) error {
	name := t.Spec().Name
	if !ValidName(name) {
		return fmt.Errorf("tool: invalid name %q: want 1-64 letters, digits, '_' or '-'", name)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.tools == nil {
		r.tools = make(map[string]Tool)
	}
	if _, ok := r.tools[name]; !ok {
		r.order = append(r.order, name)
	}
	r.tools[name] = t
	return nil
}

// Remove unregisters the tool named name and reports whether it was there.
func (r *Registry) Remove(name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.tools[name]; !ok {
		return false
	}
	r.removeLocked(name)
	return true
}

func (r *Registry) removeLocked(name string) {
	delete(r.tools, name)
	r.order = slices.DeleteFunc(r.order, func(n string) bool { return n == name })
}

// Get returns the tool named name.
func (r *Registry) Get(name string) (Tool, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	t, ok := r.tools[name]
	return t, ok
}

// Len returns the number of tools.
func (r *Registry) Len() int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.order)
}

// Tools returns the tools in registration order.
func (r *Registry) Tools() []Tool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]Tool, len(r.order))
	for i, n := range r.order {
		out[i] = r.tools[n]
	}
	return out
}

// Specs returns the tools' specs in registration order.
func (r *Registry) Specs() []llm.ToolSpec {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]llm.ToolSpec, len(r.order))
	for i, n := range r.order {
		out[i] = r.tools[n].Spec()
	}
	return out
}

// Call runs the tool named by c. An unknown tool and a panicking tool become
// error results; the error is the tool's own infrastructure error.
func (r *Registry) Call(ctx context.Context, c Call) (Result, error) {
	t, ok := r.Get(c.Name)
	if !ok {
		return Errorf("unknown tool: %q (available: %v)", c.Name, r.names()), nil
	}
	return SafeCall(ctx, t, c)
}

func (r *Registry) names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return slices.Clone(r.order)
}

// SafeCall calls t, turning a panic into an error result. Use it for tools
// you did not build with [New].
func SafeCall(ctx context.Context, t Tool, c Call) (res Result, err error) {
	defer recoverInto(c.Name, &res, &err)
	return t.Call(ctx, c)
}
