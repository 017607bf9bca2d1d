package main

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/autoagent-go/autoagent/internal/termtext"
	"github.com/autoagent-go/autoagent/manifest"
	"github.com/autoagent-go/autoagent/oci"
)

func init() { addToolsCommand(newToolsVerifyCmd) }

func newToolsVerifyCmd() *cobra.Command {
	var (
		paths       pluginPaths
		trustedRoot string
	)
	c := &cobra.Command{
		Use:   "verify [--plugins DIR] [--manifest FILE] [--trusted-root FILE]",
		Short: "Check that every approved module's file still has the approved bytes (and pulled ones their signature)",
		Long: `Check the plugins directory against the manifest, without running anything.

For each file an approval names, verify hashes the file (and its describe
sidecar NAME.tool.json, when one was approved with it) and compares it with
the approvals. It prints one line per file whose bytes no longer match any
approval, or whose approval points at a missing file, and exits 1; otherwise
it prints a summary and exits 0. Pending modules (no approval yet) are
counted, not failed. Run it in CI next to the committed manifest.

For an approval of a module pulled from a registry with a verified
signer, verify also re-checks, without the registry, its provenance
record (NAME.source.json): the recorded digest must lead to the approved
bytes, and the recorded signature must still verify with a key, or for
a keyless signature an identity and the trusted root (--trusted-root, else
PLUGINS/trusted_root.json), signers.json trusts for the reference.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return toolsVerify(c, paths, trustedRoot)
		},
	}
	paths.register(c.Flags())
	registerTrustedRoot(c.Flags(), &trustedRoot)
	return c
}

func toolsVerify(c *cobra.Command, paths pluginPaths, trustedRoot string) error {
	m, err := (&manifest.Store{Path: paths.manifestPath()}).Load()
	if err != nil {
		return err
	}
	// Verify runs nothing: it checks the files against the approvals
	// whoever wrote them, and says whether they count for this user.
	switch err := paths.trustState(m); {
	case errors.Is(err, manifest.ErrUntrusted):
		fmt.Fprintf(c.ErrOrStderr(), "autoagent: note: %s\n", termtext.Name(err.Error()))
	case err != nil:
		return err
	}
	rep, err := manifest.Verify(m, paths.dir())
	if err != nil {
		return err
	}
	w := c.OutOrStdout()
	var failed []string
	for _, p := range rep.Problems() {
		failed = append(failed, termtext.Name(p.Path))
		approved := make([]string, len(p.Approvals))
		for i, e := range p.Approvals {
			approved[i] = manifest.Short(e.SHA256)
		}
		switch p.Status {
		case manifest.FileChanged:
			why := fmt.Sprintf("changed since approval: sha256 is now %s, approved %s", manifest.Short(p.SHA256), strings.Join(approved, ", "))
			if p.Detail != "" && p.SHA256 != "" && containsSum(p.Approvals, p.SHA256) {
				why = "changed since approval: " + p.Detail
			}
			fmt.Fprintf(w, "%s: %s\n", termtext.Name(p.Path), why)
		case manifest.FileMissing:
			fmt.Fprintf(w, "%s: missing: approved as %s, but the file is not there\n", termtext.Name(p.Path), strings.Join(approved, ", "))
		case manifest.FileUnreadable:
			fmt.Fprintf(w, "%s: unreadable: %v\n", termtext.Name(p.Path), p.Err)
		}
	}
	sigFailed, sigChecked, err := verifySignatures(w, m, paths.dir(), trustedRoot)
	if err != nil {
		return err
	}
	failed = append(failed, sigFailed...)
	ok := len(rep.Files) - len(rep.Problems())
	pending := ""
	if len(rep.Unapproved) > 0 {
		pending = fmt.Sprintf("; %d pending (no approval): %s", len(rep.Unapproved), strings.Join(rep.Unapproved, ", "))
	}
	if len(sigFailed) > 0 {
		return fmt.Errorf("verify: %d of %d pulled modules' signatures failed (signers %s): %s",
			len(sigFailed), sigChecked, filepath.Join(paths.dir(), oci.SignersFile), strings.Join(sigFailed, ", "))
	}
	if !rep.OK() {
		// The failure itself goes to stderr, as for every failed verb; the
		// lines above, one per file, are the report on stdout.
		return fmt.Errorf("verify: %d of %d approved files failed (manifest %s): %s%s",
			len(rep.Problems()), len(rep.Files), paths.manifestPath(), strings.Join(failed, ", "), pending)
	}
	signed := ""
	if sigChecked > 0 {
		signed = fmt.Sprintf("; %d pulled modules' signatures verify", sigChecked)
	}
	_, err = fmt.Fprintf(w, "verify: ok: %d approved files match their approvals (manifest %s)%s%s\n", ok, paths.manifestPath(), signed, pending)
	return err
}

func containsSum(es []manifest.Entry, sum string) bool {
	for _, e := range es {
		if e.SHA256 == sum {
			return true
		}
	}
	return false
}

// verifySignatures re-checks, without the registry, the recorded
// signature of every approval that was pulled signed: the record beside
// the module must still describe the approved bytes, and its signature
// must verify with a key signers.json trusts for the reference, by the
// signer the approval names. It prints one line per failure.
func verifySignatures(w io.Writer, m *manifest.Manifest, dir, trustedRoot string) (failed []string, checked int, err error) {
	var signers *oci.Signers
	for _, e := range m.Entries() {
		if e.Source.Signer == "" {
			continue
		}
		if signers == nil {
			if signers, err = loadSigners(dir, trustedRoot); err != nil {
				return nil, 0, err
			}
		}
		checked++
		file := filepath.Join(dir, e.File)
		rec, err := oci.ReadRecord(file, e.SHA256)
		switch {
		case err != nil:
		case rec == nil:
			err = fmt.Errorf("its provenance record %s is missing or describes other bytes", oci.SourceFile(e.File))
		case rec.Digest != e.Source.Digest || rec.Signer != e.Source.Signer:
			err = fmt.Errorf("its provenance record names %s signed by %s, the approval %s signed by %s", rec.Digest, rec.Signer, e.Source.Digest, e.Source.Signer)
		default:
			err = signers.VerifyRecord(rec)
		}
		if err != nil {
			failed = append(failed, termtext.Name(file))
			fmt.Fprintf(w, "%s: signature: %s\n", termtext.Name(file), termtext.Name(err.Error()))
		}
	}
	return failed, checked, nil
}
