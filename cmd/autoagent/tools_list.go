package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/autoagent-go/autoagent/host"
	"github.com/autoagent-go/autoagent/host/plugindir"
	"github.com/autoagent-go/autoagent/internal/termtext"
	"github.com/autoagent-go/autoagent/manifest"
)

func init() { addToolsCommand(newToolsListCmd) }

// statusMissing is the list status of an approval whose file is not in the
// plugins directory.
const statusMissing = "missing"

// listedPlugin is one row of `tools list`, and its --json form.
type listedPlugin struct {
	Name       string           `json:"name"`
	File       string           `json:"file"`
	SHA256     string           `json:"sha256"`
	Status     string           `json:"status"`
	Grants     []string         `json:"grants"`
	Limits     *manifest.Limits `json:"limits,omitempty"`
	Tools      []string         `json:"tools"`
	ApprovedBy string           `json:"approved_by,omitempty"`
	ApprovedAt *time.Time       `json:"approved_at,omitempty"`
	Note       string           `json:"note,omitempty"`
	// Source is where the approved bytes were pulled from, if they were.
	Source *sourceOutput `json:"source,omitempty"`
	Reason string        `json:"reason,omitempty"`
}

type listOutput struct {
	Dir      string `json:"dir"`
	Manifest string `json:"manifest"`
	// Trusted is false when this user has not trusted the manifest's
	// content: its approvals do not count (Untrusted says why).
	Trusted   bool                 `json:"manifest_trusted"`
	Untrusted string               `json:"untrusted,omitempty"`
	Plugins   []listedPlugin       `json:"plugins"`
	Conflicts []plugindir.Conflict `json:"conflicts"`
}

func newToolsListCmd() *cobra.Command {
	var paths pluginPaths
	var asJSON bool
	c := &cobra.Command{
		Use:   "list [--plugins DIR] [--manifest FILE] [--json]",
		Short: "List the plugins directory's modules: name, file, hash, status, grants",
		Long: `List every .wasm module of the plugins directory with its status:

  approved     the manifest approves these exact bytes; it loads with its grants
  pending      no approval for these bytes (new, edited, or revoked): not loaded
  invalid      not a module, a bad ABI, or a failing describe; the reason follows
  missing      an approval whose file is not in the directory

Approved modules are loaded to list their tools, so a module that cannot
load shows as invalid. Tool names offered by two approved modules are
reported as conflicts.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return toolsList(c, paths, asJSON)
		},
	}
	paths.register(c.Flags())
	c.Flags().BoolVar(&asJSON, "json", false, "print one JSON object")
	return c
}

func toolsList(c *cobra.Command, paths pluginPaths, asJSON bool) error {
	ctx := c.Context()
	if fi, err := os.Stat(paths.dir()); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("plugins directory %s does not exist (create it and drop .wasm tools in, or pass --plugins DIR)", paths.dir())
	} else if err == nil && !fi.IsDir() {
		return fmt.Errorf("plugins directory %s is not a directory", paths.dir())
	}
	h, err := host.New(ctx, host.Options{})
	if err != nil {
		return err
	}
	defer h.Close(ctx)
	opts, err := paths.dirOptions()
	if err != nil {
		return err
	}
	d, err := plugindir.Open(ctx, h, opts)
	if err != nil {
		return err
	}
	defer d.Close(ctx)
	snap := d.Snapshot()
	m := &manifest.Manifest{}
	if snap.Untrusted == nil {
		// The approvals that count; an untrusted manifest's are listed
		// as nothing approved (its modules are pending, saying why).
		if m, err = (&manifest.Store{Path: paths.manifestPath()}).Load(); err != nil {
			return err
		}
	}
	out := listOutput{Dir: paths.dir(), Manifest: paths.manifestPath(), Trusted: snap.Untrusted == nil, Plugins: []listedPlugin{}, Conflicts: snap.Conflicts}
	if out.Conflicts == nil {
		out.Conflicts = []plugindir.Conflict{}
	}
	present := map[string]bool{}
	for _, p := range snap.Plugins {
		present[p.File] = true
		row := listedPlugin{Name: p.Name, File: p.File, SHA256: p.SHA256, Status: string(p.Status), Grants: []string{}, Tools: p.Tools}
		if e := p.Entry; e != nil {
			row.Grants = manifest.GrantStrings(e.Grants)
			row.ApprovedBy, row.ApprovedAt, row.Note, row.Source = e.ApprovedBy, &e.ApprovedAt, e.Note, sourceOf(e.Source)
			if !e.Limits.IsZero() {
				row.Limits = &e.Limits
			}
		}
		if p.Status != plugindir.StatusApproved && p.Err != nil {
			row.Reason = p.Err.Error()
		}
		if row.Tools == nil {
			row.Tools = []string{}
		}
		out.Plugins = append(out.Plugins, row)
	}
	for _, e := range m.Entries() {
		if present[e.File] {
			continue
		}
		at := e.ApprovedAt
		out.Plugins = append(out.Plugins, listedPlugin{
			Name: e.Name, File: e.File, SHA256: e.SHA256, Status: statusMissing, Grants: manifest.GrantStrings(e.Grants), Tools: []string{},
			ApprovedBy: e.ApprovedBy, ApprovedAt: &at, Note: e.Note, Source: sourceOf(e.Source),
			Reason: "approved, but the file is not in the plugins directory",
		})
	}

	if snap.Untrusted != nil {
		out.Untrusted = snap.Untrusted.Error()
	}
	w := c.OutOrStdout()
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	if len(out.Plugins) == 0 {
		_, err := fmt.Fprintf(w, "no modules in %s (manifest %s)\n", paths.dir(), paths.manifestPath())
		return err
	}
	untrustedNote(c, snap)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tFILE\tSHA256\tSTATUS\tGRANTS\tTOOLS")
	for _, r := range out.Plugins {
		grants, tools := strings.Join(r.Grants, ","), strings.Join(r.Tools, ",")
		if grants == "" {
			grants = "-"
		}
		if tools == "" {
			tools = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", termtext.Name(r.Name), termtext.Name(r.File), manifest.Short(r.SHA256), r.Status, grants, tools)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	pending := 0
	for _, r := range out.Plugins {
		switch r.Status {
		case string(plugindir.StatusInvalid), statusMissing:
			fmt.Fprintf(w, "%s: %s\n", termtext.Name(r.File), termtext.Name(r.Reason))
		case string(plugindir.StatusPending):
			pending++
		}
		if src := r.Source; src != nil {
			fmt.Fprintf(w, "%s: from %s (%s), signed by %s\n", termtext.Name(r.File), termtext.Name(src.Reference), termtext.Name(src.Digest),
				termtext.Name(cmpOr(src.Signer, "nobody verified")))
		}
	}
	for _, cf := range out.Conflicts {
		fmt.Fprintf(w, "conflict: %s\n", cf.Error())
	}
	if pending > 0 && snap.Untrusted == nil {
		fmt.Fprintf(w, "%d pending: review with `autoagent tools inspect FILE`, then `autoagent tools approve FILE --grant ...`\n", pending)
	}
	return nil
}
