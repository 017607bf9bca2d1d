package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/autoagent-go/autoagent/internal/termtext"
	"github.com/autoagent-go/autoagent/manifest"
	"github.com/autoagent-go/autoagent/oci"
)

// The OCI verbs: push, pull, sign, update. What they share is here.

func init() {
	addToolsCommand(newToolsPushCmd)
	addToolsCommand(newToolsPullCmd)
	addToolsCommand(newToolsSignCmd)
	addToolsCommand(newToolsUpdateCmd)
}

// registryFlags are the flags every registry verb takes.
type registryFlags struct{ plainHTTP bool }

func (r *registryFlags) register(fs *pflag.FlagSet) {
	fs.BoolVar(&r.plainHTTP, "plain-http", false, "talk HTTP to the registry, not HTTPS (a registry without TLS, as oras --plain-http)")
}

func (r *registryFlags) client() *oci.Client { return &oci.Client{PlainHTTP: r.plainHTTP} }

func newToolsPushCmd() *cobra.Command {
	var reg registryFlags
	c := &cobra.Command{
		Use:   "push FILE.wasm REF [--plain-http]",
		Short: "Push a module to an OCI registry as a Wasm artifact",
		Long: `Push a module to an OCI registry (REF is REGISTRY/REPOSITORY:TAG) as a
CNCF Wasm OCI artifact: one application/wasm layer, its describe document
and requested capabilities as annotations. The module's describe runs
first, with no capabilities. Credentials come from the Docker config file
and its credential helpers (docker login, oras login). Sign it next with
"autoagent tools sign REF --key cosign.key".`,
		Args: cobra.ExactArgs(2),
		RunE: func(c *cobra.Command, args []string) error {
			file, ref := args[0], args[1]
			if !strings.HasSuffix(file, ".wasm") {
				return usageError(fmt.Errorf("%s: a module file must end in .wasm", file))
			}
			r, err := reviewModule(c.Context(), file)
			if err != nil {
				return fmt.Errorf("cannot push %s: %w", file, err)
			}
			data, err := os.ReadFile(file)
			if err != nil {
				return err
			}
			if manifest.Sum(data) != r.SHA256 {
				return fmt.Errorf("cannot push %s: it changed while it was read; try again", file)
			}
			desc, err := describeJSON(r)
			if err != nil {
				return err
			}
			d, err := reg.client().Push(c.Context(), ref, oci.Module{
				File: filepath.Base(file), Bytes: data, Capabilities: manifest.GrantStrings(r.Requested), Describe: desc,
			})
			if err != nil {
				return err
			}
			fmt.Fprintf(c.OutOrStdout(), "Pushed %s to %s\n  digest:    %s\n  sha256:    %s\n  requests:  %s\n",
				termtext.Name(file), termtext.Name(ref), d, r.SHA256, requestsText(r.Requested))
			return nil
		},
	}
	reg.register(c.Flags())
	return c
}

func newToolsSignCmd() *cobra.Command {
	var (
		reg registryFlags
		key string
	)
	c := &cobra.Command{
		Use:   "sign FILE.wasm|REF --key cosign.key [--plain-http]",
		Short: "Sign a pushed module (REF) or a module file, as cosign does",
		Long: `Sign with a private key, as cosign does, so that pull can verify who
built the module. A REF (REGISTRY/REPOSITORY:TAG) is signed in the registry:
the signature of its digest is stored at the tag sha256-HEX.sig (what
"cosign sign --key" writes, and "cosign verify --key" checks). A FILE is
signed as "cosign sign-blob --key" does: the base64 signature is written to
FILE.sig. The key is cosign's (cosign generate-key-pair; its password from
$COSIGN_PASSWORD) or an unencrypted PKCS#8 PEM key.

Keyless signing (a short-lived Sigstore certificate for your OIDC identity,
logged in a transparency log) needs those online services: sign with
"cosign sign REF" (cosign v3, or --new-bundle-format), which attaches a
Sigstore bundle that "tools pull" verifies offline.`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if key == "" {
				return usageError(errors.New("--key is required: the private key to sign with (cosign.key)"))
			}
			sv, err := oci.LoadSigner(key)
			if err != nil {
				return err
			}
			target := args[0]
			if fi, err := os.Stat(target); err == nil && fi.Mode().IsRegular() {
				data, err := os.ReadFile(target)
				if err != nil {
					return err
				}
				sig, err := oci.SignBlob(sv, data)
				if err != nil {
					return err
				}
				if err := os.WriteFile(target+".sig", []byte(sig), 0o644); err != nil {
					return err
				}
				fmt.Fprintf(c.OutOrStdout(), "Signed %s (sha256 %s): signature in %s\n", termtext.Name(target), manifest.Sum(data), termtext.Name(target+".sig"))
				return nil
			}
			d, err := reg.client().Sign(c.Context(), target, sv)
			if err != nil {
				return err
			}
			fmt.Fprintf(c.OutOrStdout(), "Signed %s (digest %s)\n", termtext.Name(target), d)
			return nil
		},
	}
	reg.register(c.Flags())
	c.Flags().StringVar(&key, "key", "", "the private key to sign with (cosign.key)")
	return c
}

type pullFlags struct {
	reg           registryFlags
	paths         pluginPaths
	trustedRoot   string
	allowUnsigned bool
	name          string
	by            string
}

func (f *pullFlags) register(fs *pflag.FlagSet) {
	f.reg.register(fs)
	f.paths.register(fs)
	registerTrustedRoot(fs, &f.trustedRoot)
	fs.BoolVar(&f.allowUnsigned, "allow-unsigned", false, "pull a module whose signature is missing or not trusted (the audit log records it)")
	fs.StringVar(&f.by, "by", "", "who pulls, recorded in the audit log (default $USER)")
}

func newToolsPullCmd() *cobra.Command {
	var f pullFlags
	c := &cobra.Command{
		Use:   "pull REF [--plugins DIR] [--allow-unsigned] [--plain-http] [--name NAME]",
		Short: "Pull a signed module from an OCI registry into the plugins directory, pending",
		Long: `Pull a module from an OCI registry (REF is REGISTRY/REPOSITORY:TAG or
@sha256:DIGEST) into the plugins directory as NAME.wasm, pending: the pull
approves nothing. Review it with "tools inspect" and approve it with
"tools approve", which records where it came from.

The tag is resolved once and every byte is checked against its digest. The
module must carry a cosign signature by a signer the plugins directory's
signers.json trusts for the reference: a key (cosign sign --key), or a
keyless identity (cosign sign with a Sigstore certificate, the bundle
attached as a referrer), its OIDC issuer and subject exact or an anchored
regular expression ("issuer_regexp", "subject_regexp"):

  {"version": 1, "signers": [{"name": "alice", "key": "alice.pub",
    "references": ["registry.example.com/tools/*"]},
   {"name": "ci", "keyless": {"issuer": "https://token.actions.githubusercontent.com",
    "subject_regexp": "https://github\\.com/org/tools/.*"},
    "references": ["registry.example.com/tools/*"]}]}

A keyless signature is verified offline against the Sigstore trusted root
in PLUGINS/trusted_root.json, or --trusted-root FILE.

--allow-unsigned takes it without one; the audit log records that. A
registry that is down, a missing tag, a digest mismatch, an oversized
layer or a refused signature leave the plugins directory unchanged.
Credentials come from the Docker config file and its credential helpers.`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			_, err := pullInto(c, f, args[0], f.name, false, c.OutOrStdout())
			return err
		},
	}
	f.register(c.Flags())
	c.Flags().StringVar(&f.name, "name", "", "the module's name in the plugins directory (default: the repository's last part)")
	return c
}

// pullInto pulls reference into the plugins directory as name (default:
// the repository's last part), verified, and records the pull.
func pullInto(c *cobra.Command, f pullFlags, reference, name string, replace bool, out io.Writer) (*oci.Artifact, error) {
	ref, err := oci.ParseReference(reference)
	if err != nil {
		return nil, usageError(err)
	}
	if name == "" {
		name = ref.Repository[strings.LastIndex(ref.Repository, "/")+1:]
	}
	if !manifest.ValidName(name) {
		return nil, usageError(fmt.Errorf("%q is not a module name (1-128 letters, digits, '_', '.' or '-'): pass --name", name))
	}
	dir := f.paths.dir()
	signers, err := loadSigners(dir, f.trustedRoot)
	if err != nil {
		return nil, err
	}
	art, signer, sig, unverified, err := oci.PullVerified(c.Context(), f.reg.client(), signers, reference, f.allowUnsigned)
	if err != nil {
		return nil, fmt.Errorf("not pulled (the plugins directory is unchanged): %w", err)
	}
	by := f.by
	if by == "" {
		by = defaultApprover()
	}
	w := out
	if unverified != nil {
		fmt.Fprintf(c.ErrOrStderr(), "autoagent: warning: pulling unverified (--allow-unsigned): %s\n", termtext.Name(unverified.Error()))
	}
	path, err := oci.Install(dir, name, art, signer, sig, replace)
	if err != nil {
		return nil, err
	}
	src := manifest.Source{Reference: art.Reference, Digest: art.Digest}
	if signer != nil {
		src.Signer = signer.Identity()
	}
	store := &manifest.Store{Path: f.paths.manifestPath()}
	if err := store.RecordPull(c.Context(), manifest.Pull{
		SHA256: art.SHA256, File: filepath.Base(path), Name: name, Source: src, Unsigned: signer == nil, By: by,
	}); err != nil {
		return nil, fmt.Errorf("pulled %s, but the audit log was not written: %w", path, err)
	}
	fmt.Fprintf(w, "Pulled %s -> %s (pending: not approved)\n", termtext.Name(reference), termtext.Name(path))
	fmt.Fprintf(w, "  digest:    %s\n  sha256:    %s\n", art.Digest, art.SHA256)
	if signer != nil {
		fmt.Fprintf(w, "  signer:    %s\n", termtext.Name(signer.Identity()))
	} else {
		fmt.Fprintf(w, "  signer:    none verified (--allow-unsigned)\n")
	}
	fmt.Fprintf(w, "Review it with `autoagent tools inspect %s`, then approve it with `autoagent tools approve %s`.\n", path, path)
	return art, nil
}

func newToolsUpdateCmd() *cobra.Command {
	var f pullFlags
	c := &cobra.Command{
		Use:   "update [NAME] [--plugins DIR] [--allow-unsigned] [--plain-http]",
		Short: "Pull a newer digest of pulled modules' references; it stays pending",
		Long: `For each approved module that was pulled from a registry (or NAME only),
resolve its reference again and, when it names a new digest, pull that as
"tools pull" does, over NAME.wasm. The new bytes stay pending until you
approve them: "tools approve" then shows what the new version requests and
offers beyond the approved one. Until then the old approval does not match
the file, so the module does not load.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return toolsUpdate(c, f, args)
		},
	}
	f.register(c.Flags())
	return c
}

func toolsUpdate(c *cobra.Command, f pullFlags, args []string) error {
	m, err := (&manifest.Store{Path: f.paths.manifestPath()}).Load()
	if err != nil {
		return err
	}
	// The newest approval of each name that has a source.
	latest := map[string]manifest.Entry{}
	for _, e := range m.Entries() {
		if e.Source.IsZero() || (len(args) == 1 && e.Name != args[0]) {
			continue
		}
		if old, ok := latest[e.Name]; !ok || e.ApprovedAt.After(old.ApprovedAt) {
			latest[e.Name] = e
		}
	}
	if len(latest) == 0 {
		if len(args) == 1 {
			return fmt.Errorf("no approval of %q in %s was pulled from a registry: nothing to update (pull it with `autoagent tools pull REF`)", args[0], f.paths.manifestPath())
		}
		fmt.Fprintf(c.OutOrStdout(), "update: no approved module in %s was pulled from a registry\n", f.paths.manifestPath())
		return nil
	}
	names := make([]string, 0, len(latest))
	for n := range latest {
		names = append(names, n)
	}
	slices.Sort(names)
	w := c.OutOrStdout()
	var failed []string
	for _, n := range names {
		e := latest[n]
		art, err := f.reg.client().Pull(c.Context(), e.Source.Reference)
		if err != nil {
			fmt.Fprintf(c.ErrOrStderr(), "autoagent: %s: %s\n", termtext.Name(n), termtext.Name(err.Error()))
			failed = append(failed, n)
			continue
		}
		if art.Digest == e.Source.Digest {
			fmt.Fprintf(w, "%s: up to date (%s at %s)\n", termtext.Name(n), termtext.Name(e.Source.Reference), art.Digest)
			continue
		}
		fmt.Fprintf(w, "%s: %s moved from %s to %s\n", termtext.Name(n), termtext.Name(e.Source.Reference), e.Source.Digest, art.Digest)
		if _, err := pullInto(c, f, e.Source.Reference, strings.TrimSuffix(e.File, ".wasm"), true, c.OutOrStdout()); err != nil {
			fmt.Fprintf(c.ErrOrStderr(), "autoagent: %s: %s\n", termtext.Name(n), termtext.Name(err.Error()))
			failed = append(failed, n)
			continue
		}
		path := filepath.Join(f.paths.dir(), e.File)
		if r, err := reviewModule(c.Context(), path); err == nil {
			printChanges(w, e, r)
		} else {
			fmt.Fprintf(w, "  the new version does not load: %s\n", termtext.Name(err.Error()))
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("update: %d of %d failed: %s", len(failed), len(names), strings.Join(failed, ", "))
	}
	return nil
}

// printChanges shows what the reviewed module requests and offers beyond
// the approval e (of an earlier version).
func printChanges(w io.Writer, e manifest.Entry, r *review) {
	if extra := manifest.Missing(r.Requested, e.Grants); len(extra) > 0 {
		fmt.Fprintf(w, "  NEW REQUEST: %s (not granted to the approved version)\n", grantList(extra))
	}
	if dropped := manifest.Missing(e.Grants, r.Requested); len(dropped) > 0 {
		fmt.Fprintf(w, "  no longer requests: %s\n", grantList(dropped))
	}
	tools := r.ToolNames()
	var added, removed []string
	for _, t := range tools {
		if !slices.Contains(e.Tools, t) {
			added = append(added, termtext.Name(t))
		}
	}
	for _, t := range e.Tools {
		if !slices.Contains(tools, t) {
			removed = append(removed, termtext.Name(t))
		}
	}
	if len(added) > 0 {
		fmt.Fprintf(w, "  new tools: %s\n", strings.Join(added, ", "))
	}
	if len(removed) > 0 {
		fmt.Fprintf(w, "  tools gone: %s\n", strings.Join(removed, ", "))
	}
	if len(added)+len(removed) == 0 && len(manifest.Missing(r.Requested, e.Grants))+len(manifest.Missing(e.Grants, r.Requested)) == 0 {
		fmt.Fprintf(w, "  requests and tools unchanged\n")
	}
}

// describeJSON is the module's describe document as pushed.
func describeJSON(r *review) ([]byte, error) {
	b, err := json.Marshal(r.Inspection.Description)
	if err != nil {
		return nil, fmt.Errorf("encoding the describe document: %w", err)
	}
	return b, nil
}

// registerTrustedRoot adds --trusted-root to a verb that verifies
// signatures.
func registerTrustedRoot(fs *pflag.FlagSet, p *string) {
	fs.StringVar(p, "trusted-root", "", "the Sigstore trusted root keyless signatures verify against (default PLUGINS/"+oci.TrustedRootFile+")")
}

// loadSigners reads the plugins directory's signers file, with the
// trusted root given (else the one beside it, when a signer is keyless).
func loadSigners(dir, trustedRoot string) (*oci.Signers, error) {
	signers, err := oci.LoadSigners(filepath.Join(dir, oci.SignersFile))
	if err != nil {
		return nil, err
	}
	if trustedRoot != "" {
		if err := signers.UseTrustedRoot(trustedRoot); err != nil {
			return nil, err
		}
	}
	return signers, nil
}

// pulledSource returns the provenance of a module pulled into the plugins
// directory (its NAME.source.json, when it describes these bytes), shows
// it, and shows what these bytes request and offer beyond the newest
// approval of the same name (an earlier version).
func pulledSource(w io.Writer, file, dir, trustedRoot string, r *review, store *manifest.Store) (manifest.Source, error) {
	rec, err := oci.ReadRecord(file, r.SHA256)
	if err != nil {
		return manifest.Source{}, err
	}
	if rec == nil {
		return manifest.Source{}, nil
	}
	// The record is a file anyone who can write the directory wrote:
	// what it claims is recorded only once it checks out again.
	if rec.Signer != "" {
		signers, lerr := loadSigners(dir, trustedRoot)
		if lerr != nil {
			return manifest.Source{}, lerr
		}
		err = signers.VerifyRecord(rec)
	} else {
		err = rec.Check()
	}
	if err != nil {
		return manifest.Source{}, fmt.Errorf("cannot approve %s: its provenance record %s does not verify: %w; pull it again, or remove the record to approve the bytes as a copied-in file",
			file, oci.SourceFile(filepath.Base(file)), err)
	}
	src := rec.Source()
	fmt.Fprintf(w, "  source:    %s (digest %s)\n", termtext.Name(src.Reference), src.Digest)
	signer := src.Signer
	if signer == "" {
		signer = "none verified (pulled with --allow-unsigned)"
	}
	fmt.Fprintf(w, "  signer:    %s\n", termtext.Name(signer))
	m, err := store.Load()
	if err != nil {
		return src, nil
	}
	var prev *manifest.Entry
	for _, e := range m.ByName(manifest.NameFromFile(file)) {
		if e.SHA256 != r.SHA256 {
			prev = &e
		}
	}
	if prev != nil {
		fmt.Fprintf(w, "  against the approved %s (%s):\n", manifest.Short(prev.SHA256), termtext.Name(prev.Source.Digest))
		printChanges(w, *prev, r)
	}
	return src, nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
