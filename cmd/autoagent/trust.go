package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/autoagent-go/autoagent/host/plugindir"
	"github.com/autoagent-go/autoagent/internal/safefile"
	"github.com/autoagent-go/autoagent/internal/termtext"
	"github.com/autoagent-go/autoagent/manifest"
)

// The trust root: a manifest found in a working directory is whoever wrote
// the checkout's, so every verb that reads one judges it against this
// user's trust store (manifest.TrustStore), and `tools trust` is how a
// person trusts its exact content after reviewing it.

func init() {
	addToolsCommand(newToolsTrustCmd)
	addToolsCommand(newToolsUntrustCmd)
}

// trustStore returns this user's trust store for a plugins directory: at
// manifest.DefaultTrustPath, refused when it lies in the working
// directory, the plugins directory or the checkout holding either (the
// nearest directory above with .git, .hg, .svn or .jj), where a checkout
// could have planted it.
func trustStore(plugins string) (*manifest.TrustStore, error) {
	path, err := manifest.DefaultTrustPath()
	if err != nil {
		return nil, err
	}
	dirs := []string{plugins}
	if wd, err := os.Getwd(); err == nil {
		dirs = append(dirs, wd)
	}
	for _, d := range slices.Clone(dirs) {
		if root := checkoutRoot(d); root != "" {
			dirs = append(dirs, root)
		}
	}
	home, _ := os.UserHomeDir()
	var outside []string
	for _, d := range dirs {
		// The home directory holds the user's own configuration: it and
		// the directories above it are no checkout's.
		if abs, err := filepath.Abs(d); err == nil && (home == "" || !isWithin(home, abs)) {
			outside = append(outside, abs)
		}
	}
	return &manifest.TrustStore{Path: path, Outside: outside}, nil
}

// checkoutRoot returns the nearest directory at or above dir that holds a
// version control directory, "" when none does.
func checkoutRoot(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return ""
	}
	for d := abs; ; d = filepath.Dir(d) {
		for _, vcs := range []string{".git", ".hg", ".svn", ".jj"} {
			if _, err := os.Lstat(filepath.Join(d, vcs)); err == nil {
				return d
			}
		}
		if filepath.Dir(d) == d {
			return ""
		}
	}
}

// isWithin reports whether path is dir or lies below it, lexically.
func isWithin(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// untrustedNote tells, once, that the manifest's approvals were ignored.
func untrustedNote(c *cobra.Command, snap *plugindir.Snapshot) {
	if snap.Untrusted != nil {
		fmt.Fprintf(c.ErrOrStderr(), "autoagent: %d approval(s) ignored, their modules pending: %v\n", snap.Ignored, termtext.Name(snap.Untrusted.Error()))
	}
}

func newToolsTrustCmd() *cobra.Command {
	var (
		paths pluginPaths
		by    string
		yes   bool
	)
	c := &cobra.Command{
		Use:   "trust [--plugins DIR] [--manifest FILE] [--yes]",
		Short: "Review a manifest found here and trust its exact content: only then do its approvals count",
		Long: `Review everything a manifest approves and trust its exact content.

A manifest found in a working directory (a checkout's plugins/manifest.json)
is whoever wrote the checkout's: its approvals count only once you trust
its exact content, as direnv allow or an editor's workspace trust do. This
shows every approval (module, file, sha256, grants: env: secrets, net:
hosts, fs directories, and the others, limits, who approved it and when),
asks you to confirm on a terminal (--yes for scripts), and records the
manifest's path and the sha256 of its content in your trust store
($AUTOAGENT_TRUST, else $XDG_CONFIG_HOME/autoagent/trust.json, else
~/.config/autoagent/trust.json), outside every checkout.

Any change to the file by anyone else voids the trust; your own tools
approve and tools revoke keep it current. tools untrust removes it.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return toolsTrust(c, paths, by, yes)
		},
	}
	paths.register(c.Flags())
	c.Flags().StringVar(&by, "by", "", "who trusts, recorded in the trust store (default $USER)")
	c.Flags().BoolVarP(&yes, "yes", "y", false, "trust without asking (for scripts)")
	return c
}

func toolsTrust(c *cobra.Command, paths pluginPaths, by string, yes bool) error {
	ts, err := trustStore(paths.dir())
	if err != nil {
		return err
	}
	mpath := paths.manifestPath()
	data, err := safefile.Read(mpath, 64<<20)
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("no manifest at %s: nothing to trust (give --plugins DIR or --manifest FILE)", mpath)
	}
	if err != nil {
		return err
	}
	m, err := manifest.Parse(data)
	if err != nil {
		return fmt.Errorf("%s: %w", mpath, err)
	}
	sum := manifest.Sum(data)
	w := c.OutOrStdout()
	fmt.Fprintf(w, "Trusting %s\n", termtext.Name(mpath))
	fmt.Fprintf(w, "  sha256:    %s\n", sum)
	switch err := ts.Check(mpath, sum); {
	case err == nil:
		fmt.Fprintf(w, "  status:    already trusted (trust store %s)\n", ts.Path)
		return nil
	case !errors.Is(err, manifest.ErrUntrusted):
		return err
	default:
		var ue *manifest.UntrustedError
		if errors.As(err, &ue) && ue.Trusted != nil {
			fmt.Fprintf(w, "  status:    changed since you trusted it (sha256 %s, by %s at %s)\n",
				manifest.Short(ue.Trusted.SHA256), termtext.Name(ue.Trusted.By), ue.Trusted.At.Format("2006-01-02T15:04:05Z"))
		} else {
			fmt.Fprintln(w, "  status:    never trusted by you")
		}
	}
	entries := m.Entries()
	fmt.Fprintf(w, "  approves:  %d module(s)\n", len(entries))
	var secrets, hosts, files []string
	for _, e := range entries {
		fmt.Fprintf(w, "\n  %s (%s, sha256 %s)\n", termtext.Name(e.Name), termtext.Name(e.File), manifest.Short(e.SHA256))
		fmt.Fprintf(w, "    grants:  %s\n", grantList(e.Grants))
		fmt.Fprintf(w, "    limits:  %s\n", limitsText(e.Limits))
		fmt.Fprintf(w, "    by:      %s at %s\n", termtext.Name(e.ApprovedBy), e.ApprovedAt.Format("2006-01-02T15:04:05Z"))
		if e.Note != "" {
			fmt.Fprintf(w, "    note:    %s\n", oneLine(e.Note))
		}
		if len(e.SkipTools) > 0 {
			fmt.Fprintf(w, "    skips:   %s\n", termtext.Name(strings.Join(e.SkipTools, " ")))
		}
		for _, g := range e.Grants {
			switch g.Kind {
			case manifest.KindEnv, manifest.KindConfig:
				secrets = append(secrets, g.String())
			case manifest.KindNet:
				hosts = append(hosts, g.String())
			case manifest.KindFSRead, manifest.KindFSWrite, manifest.KindFSWorkspace:
				files = append(files, g.String())
			}
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "  environment and config: %s\n", termtext.Name(strings.Join(nonEmpty(secrets), ", ")))
	fmt.Fprintf(w, "  network:   %s\n", termtext.Name(strings.Join(nonEmpty(hosts), ", ")))
	fmt.Fprintf(w, "  files:     %s\n", termtext.Name(strings.Join(nonEmpty(files), ", ")))
	fmt.Fprintf(w, "  store:     %s\n", ts.Path)
	if !yes {
		ok, err := confirm(c.InOrStdin(), w, "Trust this exact content: its modules run with these grants? [y/N] ")
		if err != nil {
			return err
		}
		if !ok {
			return errors.New("not trusted")
		}
	}
	if by == "" {
		by = defaultApprover()
	}
	if _, err := ts.Trust(c.Context(), mpath, sum, by, manifest.TrustByReview); err != nil {
		return err
	}
	fmt.Fprintf(w, "Trusted %s (sha256 %s); any change to it by someone else voids this trust.\n", termtext.Name(mpath), manifest.Short(sum))
	return nil
}

func newToolsUntrustCmd() *cobra.Command {
	var paths pluginPaths
	c := &cobra.Command{
		Use:   "untrust [--plugins DIR] [--manifest FILE]",
		Short: "Stop trusting a manifest: its approvals no longer count here",
		Long: `Remove your trust of a manifest (see tools trust): every module it approves
is pending again for you. The manifest itself is left as it is.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			ts, err := trustStore(paths.dir())
			if err != nil {
				return err
			}
			rec, err := ts.Untrust(c.Context(), paths.manifestPath())
			if err != nil {
				return err
			}
			_, err = fmt.Fprintf(c.OutOrStdout(), "Untrusted %s (sha256 %s, trusted by %s at %s)\n",
				termtext.Name(rec.Manifest), manifest.Short(rec.SHA256), termtext.Name(rec.By), rec.At.Format("2006-01-02T15:04:05Z"))
			return err
		},
	}
	paths.register(c.Flags())
	return c
}
