package plugindir

import (
	"context"
	"errors"
	"fmt"

	"github.com/autoagent-go/autoagent/host"
	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/tool"
)

// dirTool is a plugin tool as a Dir exposes it: under its exposed name, and
// answering with an error result the model can read once its module has
// been unloaded (the file changed, was removed or revoked), which the
// module's tool reports as ErrClosed.
type dirTool struct {
	t    tool.Tool
	spec llm.ToolSpec
	file string
}

var (
	_ tool.Tool    = (*dirTool)(nil)
	_ tool.Flagger = (*dirTool)(nil)
)

func wrapTool(t tool.Tool, name, file string) *dirTool {
	spec := t.Spec()
	spec.Name = name
	return &dirTool{t: t, spec: spec, file: file}
}

func (t *dirTool) Spec() llm.ToolSpec { return t.spec }

// Flags returns the module tool's flags.
func (t *dirTool) Flags() tool.Flags { return tool.FlagsOf(t.t) }

// Unwrap returns the module's tool.
func (t *dirTool) Unwrap() tool.Tool { return t.t }

// Call runs the module's tool. Once the module is unloaded the result is an
// error result saying so, not an infrastructure error: the model can go on
// without the tool.
func (t *dirTool) Call(ctx context.Context, c tool.Call) (tool.Result, error) {
	c.Name = t.t.Spec().Name
	res, err := t.t.Call(ctx, c)
	if errors.Is(err, host.ErrClosed) {
		return t.unavailable(), nil
	}
	return res, err
}

func (t *dirTool) unavailable() tool.Result {
	return tool.Errorf("tool %q is no longer available: its module %s was changed, removed or revoked in the plugins directory", t.spec.Name, t.file)
}

func underlying(t tool.Tool) tool.Tool {
	if d, ok := t.(*dirTool); ok {
		return d.t
	}
	return t
}

// Publish adds the Dir's tools to reg now, and keeps reg in step after
// every reload: new tools are added, changed ones replaced, gone ones
// removed (see [tool.Publication]). Only names the Dir itself added are ever
// replaced or removed, so the tools already in reg (host tools) are never
// touched, and a plugin tool whose name is taken is refused. The error names
// the tools refused now; later refusals are in [Change.Err].
func (d *Dir) Publish(reg *tool.Registry) error {
	d.reloadMu.Lock()
	defer d.reloadMu.Unlock()
	d.pubMu.Lock()
	pub := tool.NewPublication(reg)
	d.pubs = append(d.pubs, pub)
	d.pubMu.Unlock()
	return publishErr(pub.Sync(d.snap.Load().tools))
}

func (d *Dir) syncPublications(s *Snapshot) error {
	d.pubMu.Lock()
	defer d.pubMu.Unlock()
	var errs []error
	for _, p := range d.pubs {
		errs = append(errs, p.Sync(s.tools))
	}
	return publishErr(errors.Join(errs...))
}

func publishErr(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("host: plugin tools refused: %w", err)
}
