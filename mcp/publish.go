package mcp

import (
	"errors"
	"fmt"

	"github.com/autoagent-go/autoagent/tool"
)

// publication is a registry a Client keeps in step with its tool set.
type publication struct {
	reg   *tool.Registry
	owned map[string]tool.Tool // names this client put in reg
}

// Publish mounts the client's tools in reg now, and keeps reg in step
// after every refresh: new tools are added, changed ones replaced, gone
// ones removed. Only names the client itself added are ever replaced or
// removed, so tools already in reg (host tools, another server's) are
// never touched, and a server tool whose name is taken is refused: use
// [ClientOptions.Prefix] to avoid that. The error names the tools refused
// now; later refusals are in [Change.Err].
func (c *Client) Publish(reg *tool.Registry) error {
	c.refreshMu.Lock()
	defer c.refreshMu.Unlock()
	c.pubMu.Lock()
	p := &publication{reg: reg, owned: map[string]tool.Tool{}}
	c.pubs = append(c.pubs, p)
	c.pubMu.Unlock()
	return p.sync(c.set.Load())
}

func (c *Client) syncPublications(s *toolSet) error {
	c.pubMu.Lock()
	defer c.pubMu.Unlock()
	var errs []error
	for _, p := range c.pubs {
		errs = append(errs, p.sync(s))
	}
	return errors.Join(errs...)
}

func (p *publication) sync(s *toolSet) error {
	for name, t := range p.owned {
		if _, still := s.byName[name]; still {
			continue
		}
		if cur, ok := p.reg.Get(name); ok && cur == t {
			p.reg.Remove(name)
		}
		delete(p.owned, name)
	}
	var errs []error
	for _, rt := range s.tools {
		var t tool.Tool = rt
		name := rt.spec.Name
		old, owned := p.owned[name]
		if old == t {
			continue
		}
		if owned {
			// Replace in place so the name never disappears between two
			// versions, unless someone else took the name meanwhile.
			if cur, ok := p.reg.Get(name); ok && cur == old {
				if err := p.reg.Replace(t); err == nil {
					p.owned[name] = t
					continue
				}
			}
			delete(p.owned, name)
		}
		if err := p.reg.Add(t); err != nil {
			errs = append(errs, fmt.Errorf("mcp: tool %q not mounted: %w", name, err))
			continue
		}
		p.owned[name] = t
	}
	return errors.Join(errs...)
}
