package mcp

import (
	"errors"
	"fmt"

	"github.com/autoagent-go/autoagent/tool"
)

// Publish mounts the client's tools in reg now, and keeps reg in step
// after every refresh: new tools are added, changed ones replaced, gone
// ones removed (see [tool.Publication]). Only names the client itself added
// are ever replaced or removed, so tools already in reg (host tools, another
// server's) are never touched, and a server tool whose name is taken is
// refused: use [ClientOptions.Prefix] to avoid that. The error names the
// tools refused now; later refusals are in [Change.Err].
func (c *Client) Publish(reg *tool.Registry) error {
	c.refreshMu.Lock()
	defer c.refreshMu.Unlock()
	c.pubMu.Lock()
	p := tool.NewPublication(reg)
	c.pubs = append(c.pubs, p)
	c.pubMu.Unlock()
	return mountErr(p.Sync(c.set.Load().asTools()))
}

func (c *Client) syncPublications(s *toolSet) error {
	c.pubMu.Lock()
	defer c.pubMu.Unlock()
	tools := s.asTools()
	var errs []error
	for _, p := range c.pubs {
		errs = append(errs, p.Sync(tools))
	}
	return mountErr(errors.Join(errs...))
}

func mountErr(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("mcp: server tools not mounted: %w", err)
}

// asTools returns the set's tools as tool.Tools, in order.
func (s *toolSet) asTools() []tool.Tool {
	out := make([]tool.Tool, len(s.tools))
	for i, t := range s.tools {
		out[i] = t
	}
	return out
}
