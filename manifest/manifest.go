package manifest

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"
)

// Version is the manifest format version this package reads and writes. A
// file of any other version is refused rather than guessed at.
const Version = 1

// Entry is one approval: the module whose bytes hash to SHA256 may run with
// Grants and Limits.
type Entry struct {
	// SHA256 is the lower-case hex sha256 of the module bytes ([Sum]).
	SHA256 string
	// File is the module's file name (a base name, no directory) in the
	// plugins directory at approval time. Trust follows the hash, not the
	// name: File is what `tools verify` checks and listings show.
	File string
	// Name is the module's name: `tools call NAME` and `tools revoke NAME`
	// use it. The CLI derives it from File without ".wasm".
	Name string
	// Grants are the capabilities approved for these bytes, canonical and
	// sorted.
	Grants []Grant
	// Limits are the module's resource limits; zero fields mean defaults.
	Limits Limits
	// ApprovedBy names who approved.
	ApprovedBy string
	// ApprovedAt is when, in UTC, to the second.
	ApprovedAt time.Time
	// Note is free text for reviewers ("reviewed source at v1.2.0").
	Note string
	// SidecarSHA256 is the sum of the module's describe sidecar
	// (NAME.tool.json) for a WASI command module that has one, "" for none.
	// The sidecar holds the tool descriptions the model reads, so it is
	// pinned with the module.
	SidecarSHA256 string
	// SkipTools are regular expressions, each matching a whole tool name,
	// of tools the module offers that are not exposed (hyper-mcp's
	// skip_tools): an operator's choice recorded with the approval.
	SkipTools []string
	// Tools are the names of the tools the module offered when it was
	// approved, so `tools revoke TOOL` still finds the approval after the
	// file was changed or removed. Informational: what a module may do
	// follows its sha256 and grants, never this list.
	Tools []string
	// Source is where the bytes were pulled from, zero for a module that
	// was copied in by hand ([Source]).
	Source Source
}

// Source is the provenance of a module pulled from an OCI registry: the
// reference asked for, the digest of the OCI manifest the bytes came
// from, and who signed that digest. It is recorded with an approval and
// shown by the manifest verbs; what a module may do still follows its
// sha256 and grants only.
type Source struct {
	// Reference is the OCI reference pulled, as given
	// ("registry.example.com/tools/echo:1.0").
	Reference string
	// Digest is the OCI manifest's digest, "sha256:" and 64 hex digits.
	Digest string
	// Signer names the verified signer (a key's fingerprint, or a
	// certificate's issuer and subject); "" when the pull was unsigned.
	Signer string
}

// IsZero reports whether s records no provenance.
func (s Source) IsZero() bool { return s == Source{} }

// maxSourceText bounds a Source's reference and signer.
const maxSourceText = 1024

// Validate reports what is wrong with a non-zero Source.
func (s Source) Validate() error { return s.validate() }

func (s Source) validate() error {
	if s.IsZero() {
		return nil
	}
	if s.Reference == "" || len(s.Reference) > maxSourceText || strings.IndexFunc(s.Reference, unicode.IsControl) >= 0 || strings.ContainsRune(s.Reference, ' ') {
		return fmt.Errorf("reference %q: want 1-%d bytes without spaces or control characters", s.Reference, maxSourceText)
	}
	if d, ok := strings.CutPrefix(s.Digest, "sha256:"); !ok || !ValidSum(d) {
		return fmt.Errorf("digest %q: want sha256: and 64 lower-case hex digits", s.Digest)
	}
	if len(s.Signer) > maxSourceText || strings.IndexFunc(s.Signer, unicode.IsControl) >= 0 {
		return fmt.Errorf("signer %q: want at most %d bytes without control characters", s.Signer, maxSourceText)
	}
	return nil
}

// Skips reports whether the entry's SkipTools withhold the tool name.
func (e Entry) Skips(name string) bool {
	for _, p := range e.SkipTools {
		if re, err := compileSkip(p); err == nil && re.MatchString(name) {
			return true
		}
	}
	return false
}

// ValidSkipPattern reports why p cannot be a SkipTools pattern, or nil.
func ValidSkipPattern(p string) error {
	if len(p) > 1024 {
		return errors.New("longer than 1024 bytes")
	}
	if _, err := compileSkip(p); err != nil {
		return fmt.Errorf("not a regular expression: %v", err)
	}
	return nil
}

// compileSkip compiles a skip pattern anchored to the whole name.
func compileSkip(p string) (*regexp.Regexp, error) {
	return regexp.Compile(`^(?:` + p + `)$`)
}

// SidecarFile returns the describe sidecar's file name for a module file:
// "echo.wasm" → "echo.tool.json".
func SidecarFile(file string) string {
	return strings.TrimSuffix(file, ".wasm") + ".tool.json"
}

var (
	nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$`)
)

// ValidName reports whether s can be an entry's Name: 1-128 letters, digits,
// '_', '.' or '-', starting with a letter or digit.
func ValidName(s string) bool { return nameRE.MatchString(s) }

// NameFromFile derives a module name from its file name: the base name
// without ".wasm". The result may still be invalid ([ValidName]).
func NameFromFile(file string) string {
	return strings.TrimSuffix(filepath.Base(file), ".wasm")
}

func validFile(s string) error {
	switch {
	case s == "":
		return fmt.Errorf("missing")
	case s == "." || s == "..":
		return fmt.Errorf("%q is not a file name", s)
	case strings.ContainsAny(s, "/\\\x00"):
		return fmt.Errorf("%q must be a file name without a directory", s)
	case len(s) > 255:
		return fmt.Errorf("longer than 255 bytes")
	}
	return nil
}

// validate checks e and canonicalises its grants and time in place.
func (e *Entry) validate() error {
	if !ValidSum(e.SHA256) {
		return fmt.Errorf("sha256 %q: want 64 lower-case hex digits", e.SHA256)
	}
	if e.SidecarSHA256 != "" && !ValidSum(e.SidecarSHA256) {
		return fmt.Errorf("sidecar_sha256 %q: want 64 lower-case hex digits", e.SidecarSHA256)
	}
	if err := validFile(e.File); err != nil {
		return fmt.Errorf("file: %v", err)
	}
	if !ValidName(e.Name) {
		return fmt.Errorf("name %q: want 1-128 letters, digits, '_', '.' or '-', starting with a letter or digit", e.Name)
	}
	if err := e.Limits.Validate(); err != nil {
		return fmt.Errorf("limits: %v", err)
	}
	if len(e.SkipTools) > 256 {
		return fmt.Errorf("skip_tools: %d patterns, more than 256", len(e.SkipTools))
	}
	for i, p := range e.SkipTools {
		if err := ValidSkipPattern(p); err != nil {
			return fmt.Errorf("skip_tools[%d] %q: %v", i, p, err)
		}
	}
	if len(e.Tools) > maxTools {
		return fmt.Errorf("tools: %d names, more than %d", len(e.Tools), maxTools)
	}
	for i, t := range e.Tools {
		if t == "" || len(t) > 256 || strings.IndexFunc(t, unicode.IsControl) >= 0 {
			return fmt.Errorf("tools[%d] %q: want 1-256 bytes without control characters", i, t)
		}
	}
	if err := e.Source.validate(); err != nil {
		return fmt.Errorf("source: %v", err)
	}
	if e.ApprovedBy == "" {
		return fmt.Errorf("approved_by: missing")
	}
	if e.ApprovedAt.IsZero() {
		return fmt.Errorf("approved_at: missing")
	}
	e.ApprovedAt = e.ApprovedAt.UTC().Truncate(time.Second)
	e.Grants = canonicalGrants(e.Grants)
	return nil
}

// canonicalGrants returns grants sorted by their string form without
// duplicates, so a manifest diff shows real changes only.
func canonicalGrants(gs []Grant) []Grant {
	out := slices.Clone(gs)
	slices.SortFunc(out, func(a, b Grant) int { return strings.Compare(a.String(), b.String()) })
	out = slices.Compact(out)
	if out == nil {
		out = []Grant{}
	}
	return out
}

func (e Entry) clone() Entry {
	e.Grants = slices.Clone(e.Grants)
	return e
}

// Manifest is the set of approvals of one manifest file, keyed by sha256.
// The zero value is an empty manifest. A Manifest is a value in memory: use
// a [Store] to read and change the file. It is not safe for concurrent
// mutation.
type Manifest struct {
	tools map[string]Entry
	// sum is the sha256 of the bytes parsed, "" for a manifest not read
	// from bytes (a missing file).
	sum string
}

// ContentSHA256 returns the sha256 of the exact bytes the manifest was
// parsed from (what a [TrustStore] trusts), "" for a manifest not read
// from a file or changed since ([Manifest.Put],
// [Manifest.Delete]).
func (m *Manifest) ContentSHA256() string { return m.sum }

// Len returns the number of approvals.
func (m *Manifest) Len() int { return len(m.tools) }

// Lookup returns the approval of the module whose bytes hash to sum.
func (m *Manifest) Lookup(sum string) (Entry, bool) {
	e, ok := m.tools[sum]
	if !ok {
		return Entry{}, false
	}
	return e.clone(), true
}

// ByName returns the approvals named name, oldest first. There can be more
// than one: re-approving an edited module adds an entry for the new bytes.
func (m *Manifest) ByName(name string) []Entry {
	return m.filter(func(e Entry) bool { return e.Name == name })
}

// ByFile returns the approvals recorded for the file name file, oldest first.
func (m *Manifest) ByFile(file string) []Entry {
	return m.filter(func(e Entry) bool { return e.File == file })
}

// Entries returns every approval, ordered by file, then oldest first.
func (m *Manifest) Entries() []Entry {
	return m.filter(func(Entry) bool { return true })
}

func (m *Manifest) filter(keep func(Entry) bool) []Entry {
	var out []Entry
	for _, e := range m.tools {
		if keep(e) {
			out = append(out, e.clone())
		}
	}
	slices.SortFunc(out, func(a, b Entry) int {
		return cmp.Or(strings.Compare(a.File, b.File), a.ApprovedAt.Compare(b.ApprovedAt), strings.Compare(a.SHA256, b.SHA256))
	})
	return out
}

// Put adds or replaces the approval for e.SHA256 after validating it; its
// grants are stored sorted and deduplicated, its time in UTC to the second.
func (m *Manifest) Put(e Entry) error {
	e = e.clone()
	if err := e.validate(); err != nil {
		return fmt.Errorf("manifest: invalid entry: %w", err)
	}
	if m.tools == nil {
		m.tools = make(map[string]Entry)
	}
	m.tools[e.SHA256] = e
	m.sum = ""
	return nil
}

// Delete removes the approval for sum and returns it.
func (m *Manifest) Delete(sum string) (Entry, bool) {
	e, ok := m.tools[sum]
	if ok {
		delete(m.tools, sum)
		m.sum = ""
	}
	return e, ok
}

// fileJSON and entryJSON are the on-disk shapes (docs/ARCHITECTURE.md §5).
type fileJSON struct {
	Version int                  `json:"version"`
	Tools   map[string]entryJSON `json:"tools"`
}

type entryJSON struct {
	File       string     `json:"file"`
	Name       string     `json:"name"`
	Grants     []string   `json:"grants"`
	Limits     limitsJSON `json:"limits,omitzero"`
	ApprovedBy string     `json:"approved_by"`
	ApprovedAt string     `json:"approved_at"`
	Note       string     `json:"note,omitempty"`
	Sidecar    string     `json:"sidecar_sha256,omitempty"`
	SkipTools  []string   `json:"skip_tools,omitempty"`
	Tools      []string   `json:"tools,omitempty"`
	Source     sourceJSON `json:"source,omitzero"`
}

type sourceJSON struct {
	Reference string `json:"reference"`
	Digest    string `json:"digest"`
	Signer    string `json:"signer,omitempty"`
}

// maxTools bounds an entry's tool names.
const maxTools = 1024

// timeFormat is RFC 3339 in UTC to the second, as in
// "2026-11-29T10:00:00Z".
const timeFormat = time.RFC3339

// MarshalJSON returns the manifest file's bytes: two-space indented, keys
// in a fixed order, non-ASCII and HTML characters kept as written, ending
// in a newline, so the committed file diffs cleanly.
func (m *Manifest) MarshalJSON() ([]byte, error) {
	f := fileJSON{Version: Version, Tools: make(map[string]entryJSON, len(m.tools))}
	for sum, e := range m.tools {
		f.Tools[sum] = entryJSON{
			File: e.File, Name: e.Name, Grants: GrantStrings(e.Grants), Limits: e.Limits.toJSON(),
			ApprovedBy: e.ApprovedBy, ApprovedAt: e.ApprovedAt.UTC().Format(timeFormat), Note: e.Note,
			Sidecar: e.SidecarSHA256, SkipTools: e.SkipTools, Tools: e.Tools,
			Source: sourceJSON(e.Source),
		}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(f); err != nil {
		return nil, fmt.Errorf("manifest: encoding: %w", err)
	}
	return buf.Bytes(), nil
}
