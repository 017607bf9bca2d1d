package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/autoagent-go/autoagent/host"
	"github.com/autoagent-go/autoagent/host/plugindir"
	"github.com/autoagent-go/autoagent/internal/termtext"
	"github.com/autoagent-go/autoagent/manifest"
)

func init() { addToolsCommand(newToolsRevokeCmd) }

func newToolsRevokeCmd() *cobra.Command {
	var (
		paths    pluginPaths
		by, note string
	)
	c := &cobra.Command{
		Use:   "revoke NAME|SHA256 [--manifest FILE]",
		Short: "Remove approvals from the manifest; the module drops back to pending",
		Long: `Remove approvals from the manifest.

The argument is a module name (every approved version of it is revoked), a
full sha256, at least 8 hex digits of one (as "tools list" shows), or the
name of a tool an approved module offers (as "tools call" accepts): every
approval that recorded that tool is revoked, even of a module file since
changed or removed, or else the approval of the current bytes of the
module that offers it. Without --plugins, the plugins directory is the
--manifest file's. Each revoked approval
is recorded in the audit log beside the manifest (manifest.log.jsonl).
Hosts watching the plugins directory drop the module at once.`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			store, err := paths.store()
			if err != nil {
				return err
			}
			if by == "" {
				by = defaultApprover()
			}
			target := args[0]
			removed, err := store.Revoke(c.Context(), manifest.Revocation{Target: target, By: by, Note: note})
			if errors.Is(err, manifest.ErrNotFound) {
				// Not a module: perhaps a tool, as `tools call` takes.
				if sum, module, ok := toolModule(c.Context(), paths, target); ok {
					fmt.Fprintf(c.OutOrStdout(), "%s is a tool of module %s (sha256 %s)\n", termtext.Name(target), termtext.Name(module), manifest.Short(sum))
					removed, err = store.Revoke(c.Context(), manifest.Revocation{Target: sum, By: by, Note: note})
				}
			}
			if errors.Is(err, manifest.ErrNotFound) {
				return fmt.Errorf("%w in %s", err, store.Path)
			}
			if err != nil {
				return err
			}
			w := c.OutOrStdout()
			for _, e := range removed {
				if e.Name != target && !strings.HasPrefix(e.SHA256, strings.ToLower(target)) && slices.Contains(e.Tools, target) {
					fmt.Fprintf(w, "%s is a tool of module %s (sha256 %s)\n", termtext.Name(target), termtext.Name(e.Name), manifest.Short(e.SHA256))
				}
				fmt.Fprintf(w, "Revoked %s: %s (%s, approved by %s at %s, grants: %s)\n",
					termtext.Name(e.Name), manifest.Short(e.SHA256), termtext.Name(e.File), termtext.Name(e.ApprovedBy),
					e.ApprovedAt.Format("2006-01-02T15:04:05Z"), grantList(e.Grants))
			}
			_, err = fmt.Fprintf(w, "manifest: %s (audit log: %s)\n", store.Path, store.LogPath())
			return err
		},
	}
	paths.register(c.Flags())
	c.Flags().StringVar(&by, "by", "", "who revokes, for the audit log (default $USER)")
	c.Flags().StringVar(&note, "note", "", "why, for the audit log")
	return c
}

// toolModule finds the approved plugin of the directory that exposes the
// tool name, returning its sha256 and module name.
func toolModule(ctx context.Context, paths pluginPaths, name string) (sum, module string, ok bool) {
	h, err := host.New(ctx, host.Options{})
	if err != nil {
		return "", "", false
	}
	defer h.Close(ctx)
	opts, err := paths.dirOptions()
	if err != nil {
		return "", "", false
	}
	d, err := plugindir.Open(ctx, h, opts)
	if err != nil {
		return "", "", false
	}
	defer d.Close(ctx)
	for _, p := range d.Snapshot().Plugins {
		if p.Status == plugindir.StatusApproved && slices.Contains(p.Tools, name) {
			return p.SHA256, p.Name, true
		}
	}
	return "", "", false
}
