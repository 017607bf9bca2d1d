package tool

import (
	"errors"
	"fmt"
	"sync"
)

// Publication keeps the tools of one changing source (a plugins directory
// that reloads, an MCP server whose tool list changes) in a Registry that
// other tools also live in.
//
// Each Sync adds the source's new tools, replaces in place the ones that
// changed (so a name never disappears between two versions) and removes
// the ones that went away. Only names the Publication itself added are
// ever replaced or removed: tools registered otherwise (the host's own
// tools, another source's) are never touched, and a source tool whose name
// is taken is refused. A Publication is safe for concurrent use.
type Publication struct {
	mu    sync.Mutex
	reg   *Registry
	owned map[string]Tool // the tools this Publication put in reg, by name
}

// NewPublication returns a Publication into reg holding no tools yet.
func NewPublication(reg *Registry) *Publication {
	return &Publication{reg: reg, owned: map[string]Tool{}}
}

// Sync makes the Publication's tools in the registry equal to tools. It
// publishes every tool it can and returns an error naming each one refused
// (wrapping ErrDuplicate when its name is taken).
func (p *Publication) Sync(tools []Tool) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	next := make(map[string]bool, len(tools))
	for _, t := range tools {
		next[t.Spec().Name] = true
	}
	for name, t := range p.owned {
		if !next[name] {
			p.reg.removeIf(name, t)
			delete(p.owned, name)
		}
	}
	var errs []error
	for _, t := range tools {
		name := t.Spec().Name
		old, owned := p.owned[name]
		if old == t {
			continue
		}
		if owned && p.reg.replaceIf(name, old, t) {
			p.owned[name] = t
			continue
		}
		delete(p.owned, name)
		if err := p.reg.Add(t); err != nil {
			errs = append(errs, fmt.Errorf("tool %q not published: %w", name, err))
			continue
		}
		p.owned[name] = t
	}
	return errors.Join(errs...)
}

// removeIf removes the tool named name if it is still t.
func (r *Registry) removeIf(name string, t Tool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if cur, ok := r.tools[name]; ok && cur == t {
		r.removeLocked(name)
	}
}

// replaceIf replaces the tool named name by t if it is still old, and
// reports whether it did.
func (r *Registry) replaceIf(name string, old, t Tool) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if cur, ok := r.tools[name]; !ok || cur != old {
		return false
	}
	r.tools[name] = t
	return true
}
