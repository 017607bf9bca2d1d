package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/autoagent-go/autoagent/host/plugindir"
	"github.com/autoagent-go/autoagent/internal/termtext"
	"github.com/autoagent-go/autoagent/manifest"
)

func init() { addToolsCommand(newToolsApproveCmd) }

type approveFlags struct {
	paths        pluginPaths
	trustedRoot  string
	grants       []string
	skipTools    []string
	by, note     string
	yes, force   bool
	memoryMB     int
	timeout      time.Duration
	outputBytes  int
	httpRespByte int
}

func newToolsApproveCmd() *cobra.Command {
	var f approveFlags
	c := &cobra.Command{
		Use:   "approve FILE.wasm [--grant G]... [--by NAME] [--note TEXT] [--manifest FILE] [--yes] [--force]",
		Short: "Approve a module's exact bytes with the capabilities it may use",
		Long: `Approve a module: record its sha256 in the manifest with the grants and
limits it runs with. One changed byte of the file voids the approval.

The module's describe runs first, with no capabilities, to learn what it
requests. Granting more than it requests is refused unless --force is given
(the audit log records what was forced). Each --grant is one capability:

  net:HOST  net:*.HOST  net:HOST:PORT  net:[IPv6]:PORT
  fs.read:PATH  fs.write:PATH   (a relative PATH is made absolute against
                                 the working directory)
  fs.workspace:PATH   (read-write, each change journaled first, so what
                       the module wrote can be listed and undone;
                       fs.write allows more)
  env:NAME  kv:NAMESPACE  tools:NAME  clock  random
  state   (one instance serves every call, in turn: what one caller gives
           the module the next may read)

A module may import a capability it is not granted: it loads, and each
call of that import is refused; such imports are listed as ungranted.
What is being granted is shown first; on a terminal you are asked to
confirm. Without a terminal, pass --yes. Approving the same bytes again
replaces their approval; approving an edited file adds an entry for the
new bytes (revoke the old one with "tools revoke SHA256"). Every approval
is appended to the audit log beside the manifest (manifest.log.jsonl).`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			f.paths.besideModule(c.Flags(), args[0])
			return toolsApprove(c, args[0], f)
		},
	}
	fl := c.Flags()
	f.paths.register(fl)
	registerTrustedRoot(fl, &f.trustedRoot)
	fl.Lookup("plugins").Usage = "the plugins directory whose manifest records the approval (default: the module's directory)"
	fl.Lookup("plugins").DefValue = "" // shown in the usage instead
	fl.Lookup("manifest").Usage = "the manifest file (default PLUGINS/manifest.json, i.e. manifest.json beside the module)"
	fl.StringArrayVar(&f.grants, "grant", nil, "a capability to grant (repeatable)")
	fl.StringVar(&f.by, "by", "", "who approves, recorded in the manifest (default $USER)")
	fl.StringVar(&f.note, "note", "", "a note kept with the approval")
	fl.StringArrayVar(&f.skipTools, "skip-tools", nil, "a regular expression of tool names not to expose (the whole name must match; repeatable), as hyper-mcp's skip_tools")
	fl.BoolVarP(&f.yes, "yes", "y", false, "approve without asking (for scripts)")
	fl.BoolVar(&f.force, "force", false, "grant capabilities the module does not request")
	fl.IntVar(&f.memoryMB, "memory", 0, "memory limit in MiB (default: the host's, 64)")
	fl.DurationVar(&f.timeout, "timeout", 0, "wall-time limit per call, e.g. 5s (default: the host's, 10s)")
	fl.IntVar(&f.outputBytes, "output-bytes", 0, "result size limit in bytes (default: the host's, 1 MiB)")
	fl.IntVar(&f.httpRespByte, "http-response-bytes", 0, "HTTP response size limit in bytes (default: the host's, 4 MiB)")
	return c
}

func toolsApprove(c *cobra.Command, file string, f approveFlags) error {
	grants, err := parseCLIGrants(f.grants)
	if err != nil {
		return usageError(err)
	}
	if f.timeout < 0 || f.timeout%time.Millisecond != 0 {
		return usageError(fmt.Errorf("--timeout %s: want a positive duration in whole milliseconds", f.timeout))
	}
	if f.memoryMB < 0 || f.memoryMB > manifest.MaxMemory>>20 {
		return usageError(fmt.Errorf("--memory %d: want 0 (the default, 64) to %d MiB", f.memoryMB, manifest.MaxMemory>>20))
	}
	limits := manifest.Limits{Memory: int64(f.memoryMB) << 20, Timeout: f.timeout, Output: int64(f.outputBytes), HTTPResponse: int64(f.httpRespByte)}
	if err := limits.Validate(); err != nil {
		return usageError(err)
	}
	name := manifest.NameFromFile(file)
	if !strings.HasSuffix(file, ".wasm") {
		return usageError(fmt.Errorf("%s: a module file must end in .wasm (the plugins directory loads only those)", file))
	}
	if !manifest.ValidName(name) {
		return fmt.Errorf("%s: %q is not a valid module name (1-128 letters, digits, '_', '.' or '-'): rename the file", file, name)
	}

	r, err := reviewModule(c.Context(), file)
	if err != nil {
		return fmt.Errorf("cannot approve %s: %w", file, err)
	}
	exceeding := manifest.Exceeding(r.Requested, grants)
	if len(exceeding) > 0 && !f.force {
		return fmt.Errorf("refusing to grant %s to %s: the module requests %s; pass --force to grant it anyway",
			grantList(exceeding), file, requestsText(r.Requested))
	}
	// A module that can write the plugins directory or the manifest's can
	// approve itself anything: the plugins directory would refuse to load
	// it; say so now, before a person approves it.
	protected := plugindir.Options{Dir: f.paths.dir(), Manifest: f.paths.manifestPath()}.Protected()
	if err := manifest.CheckProtected(grants, protected); err != nil {
		return fmt.Errorf("refusing to approve %s: %w", file, err)
	}
	for _, p := range f.skipTools {
		if err := manifest.ValidSkipPattern(p); err != nil {
			return usageError(fmt.Errorf("--skip-tools %q: %v", p, err))
		}
	}
	by := f.by
	if by == "" {
		by = defaultApprover()
	}
	store, err := f.paths.store()
	if err != nil {
		return err
	}

	w := c.OutOrStdout()
	fmt.Fprintf(w, "Approving %s\n", termtext.Name(file))
	fmt.Fprintf(w, "  sha256:    %s\n", r.SHA256)
	if r.SidecarFile != "" {
		fmt.Fprintf(w, "  sidecar:   %s (sha256 %s)\n", termtext.Name(r.SidecarFile), r.SidecarSHA256)
	}
	fmt.Fprintf(w, "  name:      %s\n", termtext.Name(name))
	var tools []string
	for _, t := range r.Inspection.Description.Tools {
		tools = append(tools, termtext.Name(t.Name))
	}
	fmt.Fprintf(w, "  tools:     %s\n", strings.Join(tools, ", "))
	if len(f.skipTools) > 0 {
		probe := manifest.Entry{SkipTools: f.skipTools}
		var skipped []string
		for _, t := range tools {
			if probe.Skips(t) {
				skipped = append(skipped, t)
			}
		}
		fmt.Fprintf(w, "  skipped:   %s (--skip-tools %s)\n", strings.Join(nonEmpty(skipped), ", "), termtext.Name(strings.Join(f.skipTools, " ")))
	}
	fmt.Fprintf(w, "  requests:  %s\n", requestsText(r.Requested))
	src, err := pulledSource(w, file, f.paths.dir(), f.trustedRoot, r, store)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "  grants:    %s\n", grantList(grants))
	if len(exceeding) > 0 {
		fmt.Fprintf(w, "  FORCED:    %s (not requested by the module)\n", grantList(exceeding))
	}
	// Without clock or random a module still has a clock (to the
	// millisecond) and randomness: only the other grants are refused.
	if missing := slices.DeleteFunc(manifest.Missing(r.Requested, grants), r.Inspection.Implies); len(missing) > 0 {
		fmt.Fprintf(w, "  not granted: %s (the module asks for it; calls that need it will be refused)\n", grantList(missing))
	}
	// Imports present but not granted: the module loads with them (grants
	// are asked at call time, as Extism does), and their calls are refused.
	if u := r.Inspection.Ungranted(grants); len(u) > 0 {
		fmt.Fprintf(w, "  ungranted: %s\n", ungrantedText(u, true))
	}
	fmt.Fprintf(w, "  limits:    %s\n", limitsText(limits))
	fmt.Fprintf(w, "  by:        %s\n", termtext.Name(by))
	fmt.Fprintf(w, "  manifest:  %s\n", store.Path)
	if !f.yes {
		ok, err := confirm(c.InOrStdin(), w, "Approve these bytes with these grants? [y/N] ")
		if err != nil {
			return err
		}
		if !ok {
			return errors.New("not approved")
		}
	}

	_, err = store.Approve(c.Context(), manifest.Approval{
		SHA256: r.SHA256, SidecarSHA256: r.SidecarSHA256, File: file, Name: name,
		Grants: grants, Requested: r.Requested, Force: f.force, Limits: limits, By: by, Note: f.note,
		SkipTools: f.skipTools, Tools: r.ToolNames(), Source: src,
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "Approved %s -> %s (manifest: %s)\n", termtext.Name(file), manifest.Short(r.SHA256), store.Path)
	fmt.Fprintln(w, "Any change to the file voids this approval.")
	if m, err := store.Load(); err == nil {
		if earlier := len(m.ByFile(filepath.Base(file))) - 1; earlier > 0 {
			fmt.Fprintf(w, "note: %d earlier approval(s) of %s remain; `autoagent tools revoke SHA256` removes one\n", earlier, termtext.Name(filepath.Base(file)))
		}
		if err := f.paths.trustState(m); err != nil {
			// Approving into a manifest others wrote trusts nothing of
			// theirs: the person reviews the whole of it first.
			fmt.Fprintf(w, "note: %s holds approvals you have not trusted, so none of them counts yet, this one included: review it with `autoagent tools trust --manifest %s`\n",
				store.Path, store.Path)
		}
	}
	if inDir, err := sameDir(filepath.Dir(file), filepath.Dir(store.Path)); err == nil && !inDir {
		fmt.Fprintf(w, "note: %s is not in %s; copy it there for the plugins directory to load it\n", termtext.Name(file), filepath.Dir(store.Path))
	}
	return nil
}

// confirm asks question on a terminal. Without one it refuses: approving
// capabilities must be a decision, so a script says --yes explicitly.
func confirm(in io.Reader, w io.Writer, question string) (bool, error) {
	if !isTerminal(in) {
		return false, usageError(errors.New("refusing to approve without confirmation: stdin is not a terminal; pass --yes to approve non-interactively"))
	}
	fmt.Fprint(w, question)
	line, err := bufio.NewReader(in).ReadString('\n')
	if err != nil && line == "" {
		return false, nil
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return true, nil
	}
	return false, nil
}

// requestsText shows what a module requests, "nothing" for none.
func requestsText(gs []manifest.Grant) string {
	if len(gs) == 0 {
		return "nothing"
	}
	return grantList(gs)
}

func sameDir(a, b string) (bool, error) {
	ia, err := os.Stat(a)
	if err != nil {
		return false, err
	}
	ib, err := os.Stat(b)
	if err != nil {
		return false, err
	}
	return os.SameFile(ia, ib), nil
}
