package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	extism "github.com/extism/go-sdk"
	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"

	"github.com/autoagent-go/autoagent/internal/safefile"
	"github.com/autoagent-go/autoagent/internal/termtext"
	"github.com/autoagent-go/autoagent/manifest"
)

func init() { addToolsCommand(newToolsImportCmd) }

func newToolsImportCmd() *cobra.Command {
	var (
		pull   pullFlags
		copyIn bool
		asJSON bool
	)
	c := &cobra.Command{
		Use:   "import CONFIG [--plugins DIR] [--copy] [--json] [--allow-unsigned] [--plain-http]",
		Short: "Propose plugins and grants from a hyper-mcp config or an Extism manifest",
		Long: `Reads a hyper-mcp runtime config (YAML or JSON: plugins with path or url and
runtime_config) or an Extism manifest (JSON: wasm, allowed_hosts, allowed_paths,
config, memory, timeout_ms) and proposes, for each plugin, the file in the plugins
directory and the approval that carries its configuration over: allowed_hosts as
net: grants ("*" as net:*, any public host), allowed_paths as fs grants with their
guest paths, env_vars and config as config: grants (${VAR} as an environment
reference), memory_limit and memory.max_pages as the memory limit, skip_tools as
--skip-tools. Nothing is approved: each proposal is the tools approve command a
person runs after reviewing it. --copy copies local modules into the plugins
directory.

A plugin at an oci:// URL is pulled and verified as "tools pull" does (its
cosign signature by a signer signers.json trusts for the reference, or
--allow-unsigned), into the plugins directory, pending. A plugin at an https://
URL carries no signature: it is downloaded, pending, only with --allow-unsigned.
Both pulls are recorded in the audit log; a module already there with other
bytes is kept. Other URLs (http://) are not fetched.`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			props, err := importConfig(c, args[0], pull.paths.dir(), copyIn, &pull)
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(c.OutOrStdout(), map[string]any{"plugins": props})
			}
			printProposals(c.OutOrStdout(), props)
			return nil
		},
	}
	pull.register(c.Flags())
	c.Flags().BoolVar(&copyIn, "copy", false, "copy local modules into the plugins directory (never over a different file)")
	c.Flags().BoolVar(&asJSON, "json", false, "print the proposals as JSON")
	return c
}

// importProposal is what tools import proposes for one plugin.
type importProposal struct {
	Name string `json:"name"`
	// Source is the module's path or URL as the config gives it.
	Source string `json:"source"`
	// File is where the plugins directory holds (or would hold) it; ""
	// when the plugin's name is not a module name (nothing is proposed).
	File string `json:"file"`
	// SHA256 is the sum of the module's bytes: a local one's, or a
	// pulled or downloaded one's; "" when there are none.
	SHA256    string          `json:"sha256,omitempty"`
	Grants    []string        `json:"grants"`
	Limits    manifest.Limits `json:"limits"`
	SkipTools []string        `json:"skip_tools,omitempty"`
	// Approve is the command that approves it as proposed ("" when
	// nothing is proposed).
	Approve string `json:"approve"`
	// Notes say what could not be carried over, and what to do.
	Notes []string `json:"notes,omitempty"`

	force bool // grants beyond what the module requests
}

// hyperConfig is hyper-mcp's runtime config (its RUNTIME_CONFIG.md).
type hyperConfig struct {
	Plugins map[string]struct {
		Path          string `yaml:"path"`
		URL           string `yaml:"url"`
		RuntimeConfig struct {
			SkipTools             []string          `yaml:"skip_tools"`
			SkipPrompts           []string          `yaml:"skip_prompts"`
			SkipResources         []string          `yaml:"skip_resources"`
			SkipResourceTemplates []string          `yaml:"skip_resource_templates"`
			AllowedHosts          []string          `yaml:"allowed_hosts"`
			AllowedPaths          []string          `yaml:"allowed_paths"`
			EnvVars               map[string]string `yaml:"env_vars"`
			MemoryLimit           string            `yaml:"memory_limit"`
		} `yaml:"runtime_config"`
	} `yaml:"plugins"`
}

func importConfig(c *cobra.Command, file, pluginsDir string, copyIn bool, pull *pullFlags) ([]importProposal, error) {
	raw, err := safefile.Read(file, 16<<20)
	if err != nil {
		return nil, err
	}
	base := filepath.Dir(file)
	var top map[string]any
	if err := yaml.Unmarshal(raw, &top); err != nil {
		return nil, fmt.Errorf("%s: neither YAML nor JSON: %v", file, err)
	}
	var props []importProposal
	switch {
	case top["plugins"] != nil:
		var cfg hyperConfig
		if err := yaml.Unmarshal(raw, &cfg); err != nil {
			return nil, fmt.Errorf("%s: not a hyper-mcp config: %v", file, err)
		}
		for _, name := range slices.Sorted(maps.Keys(cfg.Plugins)) {
			p := cfg.Plugins[name]
			rc := p.RuntimeConfig
			prop := importProposal{Name: name, Source: cmp.Or(p.Path, p.URL)}
			for _, h := range rc.AllowedHosts {
				prop.addNet(h)
			}
			for _, path := range rc.AllowedPaths {
				// hyper-mcp shows each path at the same path, read-write
				// unless "ro:" (Extism's with_allowed_path).
				prop.addPath(base, path, "")
			}
			for _, k := range slices.Sorted(maps.Keys(rc.EnvVars)) {
				prop.addConfig(k, rc.EnvVars[k])
			}
			if rc.MemoryLimit != "" {
				n, err := parseByteSize(rc.MemoryLimit)
				if err != nil {
					prop.Notes = append(prop.Notes, fmt.Sprintf("memory_limit %q: %v; the default limit applies", rc.MemoryLimit, err))
				} else {
					prop.Limits.Memory = megabytes(n) << 20
				}
			}
			for _, s := range rc.SkipTools {
				if err := manifest.ValidSkipPattern(s); err != nil {
					prop.Notes = append(prop.Notes, fmt.Sprintf("skip_tools %q: %v; left out", s, err))
					continue
				}
				prop.SkipTools = append(prop.SkipTools, s)
			}
			for what, pats := range map[string][]string{"skip_prompts": rc.SkipPrompts, "skip_resources": rc.SkipResources, "skip_resource_templates": rc.SkipResourceTemplates} {
				if len(pats) > 0 {
					prop.Notes = append(prop.Notes, what+" is not carried over: the plugin's prompts and resources are all served")
				}
			}
			props = append(props, prop)
		}
	case top["wasm"] != nil:
		var m extism.Manifest
		if err := m.UnmarshalJSON(jsonOf(raw)); err != nil {
			return nil, fmt.Errorf("%s: not an Extism manifest: %v", file, err)
		}
		if len(m.Wasm) != 1 {
			return nil, fmt.Errorf("%s: the Extism manifest has %d modules; this host runs single-module plugins (host/ABI.md 1.9: linked modules are refused)", file, len(m.Wasm))
		}
		prop := importProposal{Name: manifest.NameFromFile(file)}
		switch w := m.Wasm[0].(type) {
		case extism.WasmFile:
			prop.Source = w.Path
			if w.Name != "" {
				prop.Name = w.Name
			}
		case extism.WasmUrl:
			prop.Source = w.Url
		case extism.WasmData:
			return nil, fmt.Errorf("%s: the module is inline data; save it as a .wasm file and name it in wasm[0].path", file)
		}
		for _, h := range m.AllowedHosts {
			prop.addNet(h)
		}
		for _, host := range slices.Sorted(maps.Keys(m.AllowedPaths)) {
			prop.addPath(base, host, m.AllowedPaths[host])
		}
		for _, k := range slices.Sorted(maps.Keys(m.Config)) {
			prop.addConfig(k, m.Config[k])
		}
		if m.Memory != nil {
			if m.Memory.MaxPages > 0 {
				prop.Limits.Memory = megabytes(int64(m.Memory.MaxPages)<<16) << 20
			}
			if m.Memory.MaxHttpResponseBytes > 0 {
				prop.Limits.HTTPResponse = min(m.Memory.MaxHttpResponseBytes, math.MaxInt32)
			}
		}
		if m.Timeout > 0 {
			prop.Limits.Timeout = time.Duration(min(m.Timeout, math.MaxInt32)) * time.Millisecond
		}
		props = append(props, prop)
	default:
		return nil, fmt.Errorf("%s: neither a hyper-mcp config (plugins:) nor an Extism manifest (wasm:)", file)
	}
	for i := range props {
		props[i].locate(c, base, pluginsDir, copyIn, pull)
	}
	return props, nil
}

// addNet carries an allowed host over as a net: grant.
func (p *importProposal) addNet(h string) {
	g, err := manifest.ParseGrant("net:" + h)
	if err != nil {
		p.Notes = append(p.Notes, fmt.Sprintf("allowed host %q cannot be granted (%v): grant the hosts it stands for one by one", h, err))
		return
	}
	p.Grants = append(p.Grants, g.String())
}

// addPath carries an allowed path (host, shown at guest, "" for the same
// path; "ro:" for read-only) over as an fs grant.
func (p *importProposal) addPath(base, host, guest string) {
	kind := "fs.write"
	if rest, ok := strings.CutPrefix(host, "ro:"); ok {
		kind, host = "fs.read", rest
	}
	if !filepath.IsAbs(host) {
		host = filepath.Join(base, host)
	}
	s := kind + ":" + host
	if guest != "" && filepath.Clean(guest) != filepath.Clean(host) {
		s += "=" + guest
	}
	g, err := manifest.ParseGrant(s)
	if err != nil {
		p.Notes = append(p.Notes, fmt.Sprintf("allowed path %q cannot be granted: %v", host, err))
		return
	}
	p.Grants = append(p.Grants, g.String())
}

// secretKey matches config keys that usually hold secrets.
var secretKey = regexp.MustCompile(`(?i)key|token|secret|passw|auth|credential`)

// addConfig carries a config value or env var over: ${VAR} as an
// environment reference, a literal as written (a secret-looking one is
// flagged: it would be written into the manifest).
func (p *importProposal) addConfig(key, value string) {
	if v, ok := strings.CutPrefix(value, "${"); ok && strings.HasSuffix(v, "}") {
		value = "$" + strings.TrimSuffix(v, "}")
	} else if strings.HasPrefix(value, "$") {
		value = "$" + value // a literal $
	}
	g, err := manifest.ParseGrant("config:" + key + "=" + value)
	if err != nil {
		p.Notes = append(p.Notes, fmt.Sprintf("config %q cannot be granted: %v", key, err))
		return
	}
	if !strings.HasPrefix(g.Value, "$") && secretKey.MatchString(key) {
		p.Notes = append(p.Notes, fmt.Sprintf("config %q looks like a secret and would be written into the manifest: prefer config:%s=$VAR with the value in the environment", key, key))
	}
	p.Grants = append(p.Grants, g.String())
}

// locate finds the module: a local file is read (and with copyIn copied
// into the plugins directory), a remote one left to the operator. A name
// that is not a module name proposes nothing: the config is not trusted,
// and the name becomes a file name in the plugins directory (`../x`
// escaped it; the red team of issue 38).
func (p *importProposal) locate(c *cobra.Command, base, pluginsDir string, copyIn bool, pull *pullFlags) {
	if p.Grants == nil {
		p.Grants = []string{}
	}
	file := p.Name + ".wasm"
	if !manifest.ValidName(p.Name) || !filepath.IsLocal(file) || filepath.Base(file) != file {
		p.Notes = append(p.Notes, fmt.Sprintf("the plugin name %q is not a module name (1-128 letters, digits, '_', '.' or '-', starting with a letter or digit): nothing is copied or proposed; rename it in the config", p.Name))
		return
	}
	p.File = filepath.Join(pluginsDir, file)
	src := strings.TrimPrefix(p.Source, "file://")
	switch {
	case p.Source == "":
		p.Notes = append(p.Notes, "the plugin names no module (path or url)")
	case strings.HasPrefix(p.Source, "oci://"):
		p.pullOCI(c, pull)
	case strings.HasPrefix(p.Source, "https://"):
		p.download(c, pull)
	case strings.Contains(src, "://"):
		p.Notes = append(p.Notes, fmt.Sprintf("only oci:// and https:// modules are fetched: fetch %s yourself, save it as %s and review it with `autoagent tools inspect`", p.Source, p.File))
	default:
		if !filepath.IsAbs(src) {
			src = filepath.Join(base, src)
		}
		b, err := safefile.Read(src, maxModuleFile)
		if err != nil {
			p.Notes = append(p.Notes, fmt.Sprintf("reading the module: %v", err))
			break
		}
		p.SHA256 = manifest.Sum(b)
		p.checkRequested(c, src)
		if copyIn {
			if err := copyModule(b, p.File); err != nil {
				p.Notes = append(p.Notes, err.Error())
			} else {
				fmt.Fprintf(c.ErrOrStderr(), "autoagent: copied %s to %s\n", termtext.Name(src), termtext.Name(p.File))
			}
		} else if _, err := os.Stat(p.File); err != nil {
			p.Notes = append(p.Notes, fmt.Sprintf("copy %s to %s (or pass --copy)", src, p.File))
		}
	}
	args := []string{"autoagent", "tools", "approve", shellQuote(p.File)}
	for _, g := range p.Grants {
		args = append(args, "--grant", shellQuote(g))
	}
	if p.Limits.Memory > 0 {
		args = append(args, "--memory", strconv.FormatInt(p.Limits.Memory>>20, 10))
	}
	if p.Limits.Timeout > 0 {
		args = append(args, "--timeout", p.Limits.Timeout.String())
	}
	if p.Limits.HTTPResponse > 0 {
		args = append(args, "--http-response-bytes", strconv.FormatInt(p.Limits.HTTPResponse, 10))
	}
	for _, s := range p.SkipTools {
		args = append(args, "--skip-tools", shellQuote(s))
	}
	if p.force {
		args = append(args, "--force")
	}
	p.Approve = strings.Join(args, " ")
}

// checkRequested compares the proposed grants with what the module asks
// for: grants beyond it need --force, which the proposal then carries and
// says why.
func (p *importProposal) checkRequested(c *cobra.Command, path string) {
	r, err := reviewModule(c.Context(), path)
	if err != nil {
		p.Notes = append(p.Notes, fmt.Sprintf("reviewing the module: %v", err))
		return
	}
	gs, err := manifest.ParseGrants(p.Grants)
	if err != nil {
		return
	}
	var beyond []manifest.Grant
	for _, g := range manifest.Exceeding(r.Requested, gs) {
		if !r.Inspection.Implies(g) {
			beyond = append(beyond, g)
		}
	}
	if len(beyond) > 0 {
		p.force = true
		p.Notes = append(p.Notes, fmt.Sprintf("the module does not request %s: the config grants it, so the approval needs --force (recorded in the audit log)", grantList(beyond)))
	}
}

// copyModule writes b to dst, atomically, unless something else is there:
// a different file, or anything that is not a plain file (a link could
// lead anywhere).
func copyModule(b []byte, dst string) error {
	if fi, err := os.Lstat(dst); err == nil && !fi.Mode().IsRegular() {
		return fmt.Errorf("%s exists and is not a plain file: not overwritten", termtext.Name(dst))
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if old, err := safefile.Read(dst, maxModuleFile); err == nil {
		if bytes.Equal(old, b) {
			return nil
		}
		return fmt.Errorf("%s exists with other bytes: not overwritten", termtext.Name(dst))
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(dst), ".import-*")
	if err != nil {
		return err
	}
	_, werr := tmp.Write(b)
	cerr := tmp.Close()
	if werr != nil || cerr != nil {
		os.Remove(tmp.Name())
		return errors.Join(werr, cerr)
	}
	return os.Rename(tmp.Name(), dst)
}

func printProposals(w io.Writer, props []importProposal) {
	for i, p := range props {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "plugin:    %s\n", termtext.Name(p.Name))
		fmt.Fprintf(w, "source:    %s\n", termtext.Name(p.Source))
		fmt.Fprintf(w, "file:      %s\n", termtext.Name(cmp.Or(p.File, "-")))
		if p.SHA256 != "" {
			fmt.Fprintf(w, "sha256:    %s\n", p.SHA256)
		}
		fmt.Fprintf(w, "grants:    %s\n", termtext.Name(strings.Join(nonEmpty(p.Grants), ", ")))
		fmt.Fprintf(w, "limits:    %s\n", limitsText(p.Limits))
		if len(p.SkipTools) > 0 {
			fmt.Fprintf(w, "skip:      %s\n", termtext.Name(strings.Join(p.SkipTools, " ")))
		}
		for _, n := range p.Notes {
			fmt.Fprintf(w, "note:      %s\n", termtext.Name(n))
		}
		if p.Approve != "" {
			fmt.Fprintf(w, "approve:   %s\n", termtext.Name(p.Approve))
		}
	}
}

// parseByteSize reads hyper-mcp's sizes: "256Mi", "1GB", "512MB", "1024".
func parseByteSize(s string) (int64, error) {
	units := []struct {
		suffix string
		mult   int64
	}{{"Ki", 1 << 10}, {"Mi", 1 << 20}, {"Gi", 1 << 30}, {"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30},
		{"KB", 1000}, {"MB", 1000 * 1000}, {"GB", 1000 * 1000 * 1000}, {"K", 1000}, {"M", 1000 * 1000}, {"G", 1000 * 1000 * 1000}, {"B", 1}}
	t := strings.TrimSpace(s)
	mult := int64(1)
	for _, u := range units {
		if rest, ok := strings.CutSuffix(t, u.suffix); ok && rest != "" {
			t, mult = strings.TrimSpace(rest), u.mult
			break
		}
	}
	n, err := strconv.ParseFloat(t, 64)
	if err != nil || n <= 0 || n*float64(mult) > 1<<42 {
		return 0, errors.New("not a size such as 256Mi or 1GB")
	}
	return int64(n * float64(mult)), nil
}

// megabytes rounds n bytes up to whole MiB.
func megabytes(n int64) int64 { return (n + 1<<20 - 1) >> 20 }

// jsonOf returns the document as JSON: an Extism manifest may be written
// in YAML too.
func jsonOf(raw []byte) []byte {
	if json.Valid(raw) {
		return raw
	}
	var v any
	if yaml.Unmarshal(raw, &v) != nil {
		return raw
	}
	b, err := json.Marshal(v)
	if err != nil {
		return raw
	}
	return b
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=@%+,", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// pullOCI pulls the plugin's oci:// module into the plugins directory as
// "tools pull" does: verified, pending, recorded in the audit log.
func (p *importProposal) pullOCI(c *cobra.Command, pull *pullFlags) {
	art, err := pullInto(c, *pull, strings.TrimPrefix(p.Source, "oci://"), p.Name, false, c.ErrOrStderr())
	if err != nil {
		p.Notes = append(p.Notes, fmt.Sprintf("%s was not pulled: %v", p.Source, err))
		return
	}
	p.SHA256 = art.SHA256
	p.checkRequested(c, p.File)
}

// importHTTP fetches https:// modules: a bounded wait, and redirects only
// to https.
var importHTTP = &http.Client{
	Timeout: 2 * time.Minute,
	CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if req.URL.Scheme != "https" {
			return fmt.Errorf("redirected to %s, which is not https", req.URL.Redacted())
		}
		if len(via) >= 5 {
			return fmt.Errorf("more than 5 redirects")
		}
		return nil
	},
}

// download fetches the plugin's https:// module into the plugins
// directory, pending, when --allow-unsigned allows a module that carries
// no signature; the audit log records the pull as unsigned.
func (p *importProposal) download(c *cobra.Command, pull *pullFlags) {
	if !pull.allowUnsigned {
		p.Notes = append(p.Notes, fmt.Sprintf("%s carries no signature: pass --allow-unsigned to download it pending (the audit log records it), or fetch it yourself, save it as %s and review it with `autoagent tools inspect`", p.Source, p.File))
		return
	}
	b, err := fetchModule(c.Context(), p.Source)
	if err != nil {
		p.Notes = append(p.Notes, fmt.Sprintf("%s was not downloaded (the plugins directory is unchanged): %v", p.Source, err))
		return
	}
	if err := copyModule(b, p.File); err != nil {
		p.Notes = append(p.Notes, err.Error())
		return
	}
	sum := manifest.Sum(b)
	by := cmp.Or(pull.by, defaultApprover())
	store := &manifest.Store{Path: pull.paths.manifestPath()}
	if err := store.RecordPull(c.Context(), manifest.Pull{
		SHA256: sum, File: filepath.Base(p.File), Name: p.Name, Unsigned: true, By: by,
		Source: manifest.Source{Reference: p.Source, Digest: "sha256:" + sum},
	}); err != nil {
		p.Notes = append(p.Notes, fmt.Sprintf("downloaded %s, but the audit log was not written: %v", p.File, err))
	}
	fmt.Fprintf(c.ErrOrStderr(), "autoagent: warning: downloaded %s -> %s unsigned (--allow-unsigned; pending: not approved)\n", termtext.Name(p.Source), termtext.Name(p.File))
	p.SHA256 = sum
	p.checkRequested(c, p.File)
}

// fetchModule GETs an https:// module, at most maxModuleFile bytes.
func fetchModule(ctx context.Context, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := importHTTP.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", req.URL.Redacted(), resp.Status)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxModuleFile+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > maxModuleFile {
		return nil, fmt.Errorf("the module is larger than %d bytes", int64(maxModuleFile))
	}
	return b, nil
}
