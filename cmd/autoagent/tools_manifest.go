package main

import (
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"github.com/autoagent-go/autoagent/host/plugindir"
	"github.com/autoagent-go/autoagent/manifest"
)

// What the manifest verbs (list, inspect, approve, revoke, verify) share:
// the --plugins/--manifest flags and their defaults, and how untrusted text
// is shown.

// defaultPluginsDir is the plugins directory when --plugins is not given.
const defaultPluginsDir = "plugins"

// pluginPaths are the --plugins and --manifest flags.
type pluginPaths struct {
	// plugins is --plugins, "" when not given: dir() says which
	// directory that means.
	plugins, manifest string
}

// dir returns the plugins directory: --plugins, else the --manifest
// file's directory (a manifest governs the modules beside it, and its
// trust is recorded for that directory), else plugins.
func (p *pluginPaths) dir() string {
	switch {
	case p.plugins != "":
		return p.plugins
	case p.manifest != "":
		return filepath.Dir(p.manifest)
	}
	return defaultPluginsDir
}

func (p *pluginPaths) register(fs *pflag.FlagSet) {
	fs.StringVar(&p.plugins, "plugins", "", "the plugins directory (default: the --manifest file's directory, else "+defaultPluginsDir+")")
	fs.StringVar(&p.manifest, "manifest", "", "the manifest file (default PLUGINS/manifest.json)")
}

// besideModule makes the plugins directory the directory of the module
// file when neither --plugins nor --manifest was given: approving or
// inspecting DIR/x.wasm reads and writes DIR/manifest.json, the manifest
// of the directory the module is loaded from, wherever the command runs.
func (p *pluginPaths) besideModule(fs *pflag.FlagSet, file string) {
	if !fs.Changed("plugins") && !fs.Changed("manifest") {
		p.plugins = filepath.Dir(file)
	}
}

// manifestPath returns --manifest, or manifest.json in the plugins
// directory.
func (p *pluginPaths) manifestPath() string {
	if p.manifest != "" {
		return p.manifest
	}
	return filepath.Join(p.dir(), "manifest.json")
}

// store returns the manifest's store, which keeps this user's trust of
// the manifest current across their approvals and revocations.
func (p *pluginPaths) store() (*manifest.Store, error) {
	ts, err := p.trust()
	if err != nil {
		return nil, err
	}
	return &manifest.Store{Path: p.manifestPath(), Trust: ts}, nil
}

// trust returns this user's trust store for the plugins directory.
func (p *pluginPaths) trust() (*manifest.TrustStore, error) { return trustStore(p.dir()) }

// dirOptions are the plugins directory's options: its manifest counts as
// far as this user trusts it.
func (p *pluginPaths) dirOptions() (plugindir.Options, error) {
	ts, err := p.trust()
	if err != nil {
		return plugindir.Options{}, err
	}
	return plugindir.Options{Dir: p.dir(), Manifest: p.manifestPath(), Trust: ts}, nil
}

// trustState says whether this user trusts m's content: nil when they do
// (or m approves nothing), an *manifest.UntrustedError when not, another
// error when the trust store cannot tell.
func (p *pluginPaths) trustState(m *manifest.Manifest) error {
	if m.Len() == 0 {
		return nil
	}
	ts, err := p.trust()
	if err != nil {
		return err
	}
	return ts.Check(p.manifestPath(), m.ContentSHA256())
}

// defaultApprover is who approves or revokes when --by is not given: $USER,
// else the account name, else "unknown".
func defaultApprover() string {
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	return "unknown"
}

// parseCLIGrants parses --grant values. A relative fs.read:, fs.write: or
// fs.workspace: path is made absolute against the working directory first, so
// `--grant fs.read:data` means ./data; the manifest only holds absolute
// paths.
func parseCLIGrants(ss []string) ([]manifest.Grant, error) {
	out := make([]manifest.Grant, 0, len(ss))
	for _, s := range ss {
		for _, kind := range []manifest.Kind{manifest.KindFSRead, manifest.KindFSWrite, manifest.KindFSWorkspace} {
			if path, ok := strings.CutPrefix(s, string(kind)+":"); ok && path != "" && !filepath.IsAbs(path) {
				abs, err := filepath.Abs(path)
				if err != nil {
					return nil, fmt.Errorf("--grant %s: %w", s, err)
				}
				s = string(kind) + ":" + abs
			}
		}
		g, err := manifest.ParseGrant(s)
		if err != nil {
			return nil, err
		}
		out = append(out, g)
	}
	return out, nil
}

// grantList shows grants as "a, b" or "-" for none.
func grantList(gs []manifest.Grant) string {
	if len(gs) == 0 {
		return "-"
	}
	return strings.Join(manifest.GrantStrings(gs), ", ")
}

// limitsText describes an approval's limits, defaults included.
func limitsText(l manifest.Limits) string {
	var parts []string
	if l.Memory != 0 {
		parts = append(parts, "memory "+sizeText(l.Memory))
	}
	if l.Timeout != 0 {
		parts = append(parts, "timeout "+l.Timeout.String())
	}
	for _, f := range []struct {
		name string
		v    int64
	}{
		{"output", l.Output}, {"HTTP response", l.HTTPResponse}, {"HTTP request", l.HTTPRequest},
		{"kv value", l.KVValue}, {"kv namespace", l.KVNamespace}, {"stack", l.Stack},
		{"error text", l.ErrorText}, {"call tree memory", l.CallTreeMemory}, {"fs write", l.FSWrite}, {"kv write", l.KVWrite},
	} {
		if f.v != 0 {
			parts = append(parts, f.name+" "+sizeText(f.v))
		}
	}
	for _, f := range []struct {
		name string
		v    int64
	}{{"table entries", l.Tables}, {"call depth", int64(l.CallDepth)}, {"open files", int64(l.OpenFiles)}} {
		if f.v != 0 {
			parts = append(parts, fmt.Sprintf("%s %d", f.name, f.v))
		}
	}
	if len(parts) == 0 {
		return "host defaults"
	}
	return strings.Join(parts, ", ") + " (others: host defaults)"
}

// sizeText writes n bytes in MiB when it is a whole number of them.
func sizeText(n int64) string {
	if n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}
