package plugindir

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/autoagent-go/autoagent/host"
	"github.com/autoagent-go/autoagent/internal/safefile"
	"github.com/autoagent-go/autoagent/manifest"
)

// Review is what a person looks at before approving a module: read once,
// so the bytes inspected are the bytes approved. `autoagent tools
// inspect` and `approve` and the HTTP API's tools endpoints make it.
type Review struct {
	Path          string
	Module        []byte
	SHA256        string
	SidecarFile   string // "" when there is none
	SidecarSHA256 string
	Inspection    *host.Inspection
	// Requested is what the module asks for.
	Requested []manifest.Grant
}

// ToolNames are the names of the tools the module's describe offers, as
// an approval records them ([manifest.Entry.Tools]).
func (r *Review) ToolNames() []string {
	if r.Inspection == nil {
		return nil
	}
	names := make([]string, 0, len(r.Inspection.Description.Tools))
	for _, t := range r.Inspection.Description.Tools {
		names = append(names, t.Name)
	}
	return names
}

// MaxModuleFile bounds a module or sidecar file a review reads (as the
// plugins directory does by default).
const MaxModuleFile = 256 << 20

// ReviewModule reads the module at path (and its describe sidecar) and
// runs its describe with no capabilities. On an error after the read, the
// Review holds what was learnt (its SHA256).
func ReviewModule(ctx context.Context, path string) (*Review, error) {
	b, err := safefile.Read(path, MaxModuleFile)
	if err != nil {
		return nil, err
	}
	r := &Review{Path: path, Module: b, SHA256: manifest.Sum(b)}
	sidePath := filepath.Join(filepath.Dir(path), manifest.SidecarFile(filepath.Base(path)))
	side, err := safefile.Read(sidePath, MaxModuleFile)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		side = nil
	case err != nil:
		return r, fmt.Errorf("describe sidecar: %w", err)
	default:
		r.SidecarFile, r.SidecarSHA256 = filepath.Base(sidePath), manifest.Sum(side)
	}
	h, err := host.New(ctx, host.Options{})
	if err != nil {
		return r, err
	}
	defer h.Close(ctx)
	r.Inspection, err = h.Inspect(ctx, manifest.NameFromFile(path), b, side)
	if err != nil {
		return r, err
	}
	r.Requested, err = r.Inspection.Requested()
	return r, err
}

// Approval returns the manifest's approval of exactly these bytes and
// sidecar, if any.
func (r *Review) Approval(m *manifest.Manifest) (manifest.Entry, bool) {
	e, ok := m.Lookup(r.SHA256)
	if !ok || e.SidecarSHA256 != r.SidecarSHA256 {
		return manifest.Entry{}, false
	}
	return e, true
}

// ErrGrantsExceed is wrapped by CheckGrants's error for grants the module
// did not request, given without force.
var ErrGrantsExceed = errors.New("plugindir: grants exceed what the module requests")

// CheckGrants refuses what approving r with grants must not do: grant
// more than the module requests (unless force), or reach what the plugins
// directory opts protects (its modules and manifest: a module that can
// write them can approve itself anything).
func (r *Review) CheckGrants(grants []manifest.Grant, force bool, opts Options) error {
	if exceeding := manifest.Exceeding(r.Requested, grants); len(exceeding) > 0 && !force {
		requested := "nothing"
		if len(r.Requested) > 0 {
			requested = strings.Join(manifest.GrantStrings(r.Requested), ", ")
		}
		return fmt.Errorf("%w: refusing to grant %s to %s: the module requests %s; force it to grant it anyway",
			ErrGrantsExceed, strings.Join(manifest.GrantStrings(exceeding), ", "), r.Path, requested)
	}
	if err := manifest.CheckProtected(grants, opts.Protected()); err != nil {
		return fmt.Errorf("refusing to approve %s: %w", r.Path, err)
	}
	return nil
}
