package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/autoagent-go/autoagent/host"
	"github.com/autoagent-go/autoagent/host/plugindir"
	"github.com/autoagent-go/autoagent/internal/termtext"
	"github.com/autoagent-go/autoagent/manifest"
)

func init() { addToolsCommand(newToolsInspectCmd) }

// review is what a person looks at before approving a module
// (plugindir.Review).
type review = plugindir.Review

// maxModuleFile bounds a module or sidecar file the CLI reads (as the
// plugins directory does by default).
const maxModuleFile = plugindir.MaxModuleFile

// reviewModule reads the module at path (and its describe sidecar) and
// runs its describe with no capabilities.
func reviewModule(ctx context.Context, path string) (*review, error) {
	return plugindir.ReviewModule(ctx, path)
}

type inspectApproval struct {
	Name       string          `json:"name"`
	File       string          `json:"file"`
	Grants     []string        `json:"grants"`
	Limits     manifest.Limits `json:"limits"`
	ApprovedBy string          `json:"approved_by"`
	ApprovedAt time.Time       `json:"approved_at"`
	Note       string          `json:"note,omitempty"`
	// Source is where the approved bytes were pulled from, if they were.
	Source *sourceOutput `json:"source,omitempty"`
}

// sourceOutput is a pulled module's provenance as the JSON outputs show it.
type sourceOutput struct {
	Reference string `json:"reference"`
	Digest    string `json:"digest"`
	Signer    string `json:"signer,omitempty"`
}

func sourceOf(s manifest.Source) *sourceOutput {
	if s.IsZero() {
		return nil
	}
	return &sourceOutput{Reference: s.Reference, Digest: s.Digest, Signer: s.Signer}
}

type inspectOutput struct {
	File          string   `json:"file"`
	SHA256        string   `json:"sha256"`
	Sidecar       string   `json:"sidecar,omitempty"`
	SidecarSHA256 string   `json:"sidecar_sha256,omitempty"`
	ABI           host.ABI `json:"abi"`
	Status        string   `json:"status"`
	// Reason says why the module is invalid, or why its approval does
	// not count (a manifest this user has not trusted).
	Reason    string           `json:"reason,omitempty"`
	Manifest  string           `json:"manifest"`
	Approval  *inspectApproval `json:"approval"`
	Requested []string         `json:"requested"`
	// Capabilities is what the describe document's "capabilities" asks
	// for, under docs/ARCHITECTURE.md's name (§8); Requested is the same list.
	Capabilities []string `json:"capabilities"`
	Needs        []string `json:"needs"`
	Imports      []string `json:"imports"`
	// HostFunctions are the imports an application registers (host
	// functions), each needing host:NAME.
	HostFunctions []string `json:"host_functions"`
	// Ungranted are the imports present but not granted: those whose
	// grant the approval lacks (all that need one, when nothing approves
	// these bytes). The module loads with them; each call is refused.
	Ungranted []host.GatedImport `json:"ungranted"`
	Describe  host.Description   `json:"describe"`
}

func newToolsInspectCmd() *cobra.Command {
	var (
		paths  pluginPaths
		asJSON bool
	)
	c := &cobra.Command{
		Use:   "inspect FILE.wasm [--json]",
		Short: "Show a module's own describe output, requested capabilities, sha256 and approval status",
		Long: `Show what a module says about itself before you approve it: its tools and
their input schemas, the capabilities it requests, the grant kinds its
imports call for, its sha256, and whether the manifest approves these bytes.
Imports present but not granted (by the approval; by nothing while the
module is pending) are listed as ungranted: the module loads with them,
and each of their calls is refused.

The module's describe runs with no capabilities at all and tight limits.
A describe sidecar NAME.tool.json beside the module is used instead of
the describe export, and is pinned with the module when you approve it.`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			paths.besideModule(c.Flags(), args[0])
			return toolsInspect(c, args[0], paths, asJSON)
		},
	}
	paths.register(c.Flags())
	c.Flags().Lookup("plugins").Usage = "the plugins directory whose manifest gives the status (default: the module's directory)"
	c.Flags().Lookup("plugins").DefValue = "" // shown in the usage instead
	c.Flags().Lookup("manifest").Usage = "the manifest file (default PLUGINS/manifest.json, i.e. manifest.json beside the module)"
	c.Flags().BoolVar(&asJSON, "json", false, "print one JSON object")
	return c
}

func toolsInspect(c *cobra.Command, file string, paths pluginPaths, asJSON bool) error {
	r, err := reviewModule(c.Context(), file)
	if err != nil {
		if r != nil {
			// Read but invalid (not a module, a bad ABI, a failing
			// describe): reported with the reason, then exit 1.
			if asJSON {
				out := inspectOutput{
					File: file, SHA256: r.SHA256, Sidecar: r.SidecarFile, SidecarSHA256: r.SidecarSHA256,
					Status: string(plugindir.StatusInvalid), Reason: err.Error(), Manifest: paths.manifestPath(),
					Requested: []string{}, Capabilities: []string{}, Needs: []string{}, Imports: []string{}, HostFunctions: []string{},
					Ungranted: []host.GatedImport{}, Describe: host.Description{Tools: []host.ToolDescription{}},
				}
				if encErr := printJSON(c.OutOrStdout(), out); encErr != nil {
					return encErr
				}
			} else {
				fmt.Fprintf(c.OutOrStdout(), "file:      %s\nsha256:    %s\nstatus:    invalid: %s\n", termtext.Name(file), r.SHA256, termtext.Name(err.Error()))
			}
		}
		return err
	}
	requested := manifest.GrantStrings(r.Requested)
	out := inspectOutput{
		File: file, SHA256: r.SHA256, Sidecar: r.SidecarFile, SidecarSHA256: r.SidecarSHA256,
		ABI: r.Inspection.ABI, Manifest: paths.manifestPath(), Status: string(plugindir.StatusPending),
		Requested: requested, Capabilities: requested, Needs: r.Inspection.Needs, Imports: r.Inspection.Imports,
		HostFunctions: r.Inspection.HostFunctions, Describe: r.Inspection.Description,
	}
	if out.HostFunctions == nil {
		out.HostFunctions = []string{}
	}
	if out.Needs == nil {
		out.Needs = []string{}
	}
	if out.Imports == nil {
		out.Imports = []string{}
	}
	m, err := (&manifest.Store{Path: paths.manifestPath()}).Load()
	if err != nil {
		m = &manifest.Manifest{}
	} else {
		err = paths.trustState(m)
	}
	var untrusted *manifest.UntrustedError
	switch {
	case errors.As(err, &untrusted):
		// Approved or not, nothing in it counts for this user.
		if _, ok := r.Approval(m); ok {
			out.Reason = untrusted.Error()
		}
	case err != nil:
		// The review itself does not depend on the manifest; say why the
		// status is unknown rather than hide the module's description.
		fmt.Fprintf(c.ErrOrStderr(), "autoagent: %s\n", termtext.Name(err.Error()))
		out.Status = "unknown"
	}
	var granted []manifest.Grant // a pending module runs with none
	if e, ok := r.Approval(m); ok && err == nil {
		out.Status = string(plugindir.StatusApproved)
		out.Approval = &inspectApproval{Name: e.Name, File: e.File, Grants: manifest.GrantStrings(e.Grants), Limits: e.Limits,
			ApprovedBy: e.ApprovedBy, ApprovedAt: e.ApprovedAt, Note: e.Note, Source: sourceOf(e.Source)}
		granted = e.Grants
	}
	if out.Ungranted = r.Inspection.Ungranted(granted); out.Ungranted == nil {
		out.Ungranted = []host.GatedImport{}
	}
	if asJSON {
		return printJSON(c.OutOrStdout(), out)
	}
	printInspection(c.OutOrStdout(), r, out)
	return nil
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func printInspection(w io.Writer, r *review, out inspectOutput) {
	fmt.Fprintf(w, "file:      %s\n", termtext.Name(out.File))
	fmt.Fprintf(w, "sha256:    %s\n", out.SHA256)
	if out.Sidecar != "" {
		fmt.Fprintf(w, "sidecar:   %s (sha256 %s)\n", termtext.Name(out.Sidecar), out.SidecarSHA256)
	}
	fmt.Fprintf(w, "abi:       %s\n", out.ABI)
	switch a := out.Approval; {
	case a != nil:
		fmt.Fprintf(w, "status:    approved by %s at %s in %s\n", termtext.Name(a.ApprovedBy), a.ApprovedAt.Format(time.RFC3339), termtext.Name(out.Manifest))
		fmt.Fprintf(w, "grants:    %s\n", strings.Join(nonEmpty(a.Grants), ", "))
		if a.Note != "" {
			fmt.Fprintf(w, "note:      %s\n", termtext.Name(a.Note))
		}
		if src := a.Source; src != nil {
			fmt.Fprintf(w, "source:    %s (digest %s)\n", termtext.Name(src.Reference), termtext.Name(src.Digest))
			fmt.Fprintf(w, "signer:    %s\n", termtext.Name(cmpOr(src.Signer, "none verified (pulled with --allow-unsigned)")))
		}
	case out.Status == "unknown":
		fmt.Fprintf(w, "status:    unknown (the manifest %s does not load)\n", termtext.Name(out.Manifest))
	case out.Reason != "":
		fmt.Fprintf(w, "status:    pending: approved in %s, which does not count: %s\n", termtext.Name(out.Manifest), termtext.Name(out.Reason))
	default:
		fmt.Fprintf(w, "status:    pending: no approval for these bytes in %s\n", termtext.Name(out.Manifest))
	}
	fmt.Fprintf(w, "requests:  %s\n", requestsText(r.Requested))
	if len(out.Needs) > 0 {
		fmt.Fprintf(w, "imports:   call for %s grants (without one the module loads, and those calls are refused)\n", strings.Join(out.Needs, ", "))
	}
	if len(out.Ungranted) > 0 {
		fmt.Fprintf(w, "ungranted: %s\n", ungrantedText(out.Ungranted, out.Approval != nil))
	}
	if len(out.HostFunctions) > 0 {
		fmt.Fprintf(w, "host functions: %s (each needs the grant host:NAME, and the application running the module registers it)\n",
			termtext.Name(strings.Join(out.HostFunctions, ", ")))
	}
	if changes := listChanges(out.Imports); changes != "" {
		fmt.Fprintf(w, "changes:   its %s may change after approval (it imports notify_*_list_changed): what it adds is not shown here, and a tool another plugin serves stays with that plugin\n", changes)
	}
	if slices.Contains(r.Requested, manifest.Grant{Kind: manifest.KindState}) {
		fmt.Fprintf(w, "state:     it asks to keep its instance (the grant state): granted, one instance serves every call in turn, so what one caller gives it the next may read; without it each call gets a fresh instance\n")
	}
	fmt.Fprintf(w, "tools:\n")
	for _, t := range out.Describe.Tools {
		fmt.Fprintf(w, "  %s\n", termtext.Name(t.Name))
		if t.Description != "" {
			fmt.Fprintf(w, "    %s\n", oneLine(t.Description))
		}
		if t.Export != "" {
			fmt.Fprintf(w, "    export: %s (an Extism function: input the argument \"input\", output the text)\n", termtext.Name(t.Export))
		}
		fmt.Fprintf(w, "    input:  %s\n", termtext.Name(compactJSON(t.InputSchema)))
		if len(t.OutputSchema) > 0 {
			fmt.Fprintf(w, "    output: %s\n", termtext.Name(compactJSON(t.OutputSchema)))
		}
	}
	// A hyper-mcp v2 plugin's prompts and resources reach an MCP client
	// as its tools do: the person approving it sees them too.
	if d := out.Describe; len(d.Prompts)+len(d.Resources)+len(d.ResourceTemplates) > 0 {
		fmt.Fprintf(w, "prompts and resources:\n")
		for _, p := range d.Prompts {
			fmt.Fprintf(w, "  prompt %s: %s\n", termtext.Name(p.Name), oneLine(p.Description))
		}
		for _, r := range d.Resources {
			fmt.Fprintf(w, "  resource %s (%s): %s\n", termtext.Name(r.URI), termtext.Name(r.Name), oneLine(r.Description))
		}
		for _, r := range d.ResourceTemplates {
			fmt.Fprintf(w, "  resource template %s (%s): %s\n", termtext.Name(r.URITemplate), termtext.Name(r.Name), oneLine(r.Description))
		}
	}
}

// ungrantedText shows the imports present but not granted, and what
// that means: approved says whether the grants are an approval's (else
// the module is pending, and would run with none).
func ungrantedText(us []host.GatedImport, approved bool) string {
	parts := make([]string, len(us))
	for i, u := range us {
		need := u.Need
		if !strings.Contains(need, ":") {
			need += ":" // a kind: any grant of it
		}
		parts[i] = termtext.Name(u.Import) + " (needs " + termtext.Name(need) + ")"
	}
	whose := "its grants"
	if !approved {
		whose = "no grants"
	}
	return strings.Join(parts, ", ") + "; with " + whose + " the module loads, and each call of these is refused"
}

// listChanges names the lists a module may change at run time, by the
// hyper-mcp notifications it imports ("" for none).
func listChanges(imports []string) string {
	var lists []string
	for _, l := range []string{"tool", "prompt", "resource"} {
		if slices.Contains(imports, "extism:host/user.notify_"+l+"_list_changed") {
			lists = append(lists, l+"s")
		}
	}
	return strings.Join(lists, ", ")
}

// maxDescription bounds a description as inspect prints it.
const maxDescription = 500

// oneLine is safeText of a module's free text on one line: runs of spaces
// folded, cut at maxDescription bytes, so a description cannot pad itself
// to the terminal's width and draw lines of its own below the real ones
// (found by attacking our own sandbox: "status: approved by
// security-team" after a screen of spaces).
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > maxDescription {
		cut := maxDescription
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return termtext.Name(s)
}

func nonEmpty(ss []string) []string {
	if len(ss) == 0 {
		return []string{"-"}
	}
	return ss
}

func compactJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}
