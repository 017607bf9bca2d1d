package manifest

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/gofrs/flock"

	"github.com/autoagent-go/autoagent/internal/safefile"
)

// ErrNotFound is wrapped by the error [Store.Revoke] returns when nothing
// matches the name or hash.
var ErrNotFound = errors.New("manifest: no approval matches")

// ErrExceedsRequest is matched (errors.Is) by the *[ExceedError] of an
// approval that grants more than the module asks for.
var ErrExceedsRequest = errors.New("manifest: grants exceed what the module requests")

// ExceedError refuses an approval granting capabilities the module did not
// ask for. Set [Approval.Force] to approve anyway.
type ExceedError struct {
	// Exceeding are the grants no requested capability covers.
	Exceeding []Grant
	// Requested is what the module asks for.
	Requested []Grant
}

func (e *ExceedError) Error() string {
	req := "nothing"
	if len(e.Requested) > 0 {
		req = joinGrants(e.Requested)
	}
	return fmt.Sprintf("manifest: refusing to grant %s: the module requests %s", joinGrants(e.Exceeding), req)
}

// Is matches ErrExceedsRequest.
func (e *ExceedError) Is(target error) bool { return target == ErrExceedsRequest }

func joinGrants(gs []Grant) string { return strings.Join(GrantStrings(gs), ", ") }

// Store reads and changes one manifest file and its audit log.
//
// Every change is a read-modify-write under an exclusive lock on a file
// beside the manifest (PATH.lock), so two processes approving at once both
// get their entry in. The file is replaced atomically (temporary file,
// fsync, rename, fsync of the directory): a reader never sees half a file.
// A file that does not parse is never overwritten.
type Store struct {
	// Path is the manifest file, for example "plugins/manifest.json".
	// A symbolic link is followed: the file it points to is replaced.
	Path string
	// Now returns the current time for approved_at and the audit log;
	// nil means time.Now.
	Now func() time.Time
	// Trust, when set, keeps this user's trust of the manifest current
	// across their own changes: a change to content the store trusts (or
	// to a manifest with no approvals) leaves the content written trusted,
	// since this user wrote it; a change to an untrusted manifest leaves
	// it untrusted (approving one tool must not trust what others put
	// there). Nil leaves trust alone.
	Trust *TrustStore
}

// LogPath returns the audit log beside the manifest: "manifest.json" →
// "manifest.log.jsonl".
func (s *Store) LogPath() string {
	return strings.TrimSuffix(s.Path, ".json") + ".log.jsonl"
}

// LockPath returns the lock file beside the manifest. It stays in place
// between writers (deleting a lock file races with the next locker); keep it
// out of version control.
func (s *Store) LockPath() string { return s.Path + ".lock" }

func (s *Store) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// maxManifestBytes bounds the manifest file Load reads.
const maxManifestBytes = 64 << 20

// Load reads the manifest. A missing file is an empty manifest, and only a
// missing file: an empty, unreadable or corrupt file, or one of another
// version, is an error naming the file (a *[ParseError] when the bytes are
// at fault).
func (s *Store) Load() (*Manifest, error) {
	if s.Path == "" {
		return nil, errors.New("manifest: Store.Path is empty")
	}
	// Not os.ReadFile: a FIFO or device planted at the path must not
	// block or flood the reader.
	data, err := safefile.Read(s.Path, maxManifestBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return &Manifest{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("manifest: reading %w", err)
	}
	return parse(s.Path, data)
}

// Approval is a request to approve one module's bytes.
type Approval struct {
	// SHA256 is the module's [Sum]. Required.
	SHA256 string
	// SidecarSHA256 is the [Sum] of the module's describe sidecar
	// ([SidecarFile]), "" when it has none.
	SidecarSHA256 string
	// File is the module's file name; a directory part is dropped.
	File string
	// Name is the module's name; "" means [NameFromFile] of File.
	Name string
	// Grants are the capabilities approved.
	Grants []Grant
	// Requested is what the module's describe output asks for. Grants
	// beyond it are refused with an *[ExceedError] unless Force is set.
	Requested []Grant
	// Force approves grants beyond Requested; the audit log records which.
	Force bool
	// Limits are the module's resource limits; zero fields mean defaults.
	Limits Limits
	// By names who approves. Required.
	By string
	// Note is free text kept with the approval.
	Note string
	// SkipTools withhold the module's tools whose names they match
	// ([Entry.SkipTools]).
	SkipTools []string
	// Tools are the names of the tools the module offers ([Entry.Tools]).
	Tools []string
	// Source is where the bytes were pulled from ([Entry.Source]), zero
	// for none.
	Source Source
}

// Approve records the approval under the lock, replacing an earlier
// approval of the same bytes, and appends an "approve" line to the audit
// log. Approving an edited module adds an entry: the approval of the old
// bytes stays until revoked.
func (s *Store) Approve(ctx context.Context, a Approval) (Entry, error) {
	for _, g := range a.Grants {
		if again, err := ParseGrant(g.String()); err != nil || again != g {
			return Entry{}, fmt.Errorf("manifest: grant %+v is not canonical; build grants with ParseGrant", g)
		}
	}
	exceeding := Exceeding(a.Requested, a.Grants)
	if len(exceeding) > 0 && !a.Force {
		return Entry{}, &ExceedError{Exceeding: exceeding, Requested: canonicalGrants(a.Requested)}
	}
	file := filepath.Base(a.File)
	name := a.Name
	if name == "" {
		name = NameFromFile(file)
	}
	e := Entry{
		SHA256: a.SHA256, File: file, Name: name, Grants: a.Grants, Limits: a.Limits,
		ApprovedBy: a.By, ApprovedAt: s.now(), Note: a.Note, SidecarSHA256: a.SidecarSHA256, SkipTools: a.SkipTools,
		Tools: slices.Clone(a.Tools), Source: a.Source,
	}
	if err := e.validate(); err != nil {
		return Entry{}, fmt.Errorf("manifest: invalid approval: %w", err)
	}
	err := s.update(ctx, a.By, TrustByApprove, func(m *Manifest) ([]AuditEntry, error) {
		_, replaced := m.Lookup(e.SHA256)
		if err := m.Put(e); err != nil {
			return nil, err
		}
		rec := recordOf(ActionApprove, e, a.By, e.ApprovedAt)
		rec.Replaced = replaced
		if len(exceeding) > 0 {
			rec.Forced = canonicalGrants(exceeding)
		}
		return []AuditEntry{rec}, nil
	})
	if err != nil {
		return Entry{}, err
	}
	return e.clone(), nil
}

// Revocation is a request to revoke approvals.
type Revocation struct {
	// Target is a full sha256, a module name, or a unique prefix of at
	// least 8 hex digits of a sha256 (as listings show), tried in that
	// order.
	Target string
	// By names who revokes. Required.
	By string
	// Note is free text recorded in the audit log.
	Note string
}

// MinPrefix is the shortest sha256 prefix [Store.Revoke] accepts.
const MinPrefix = 8

// Revoke removes every approval Target names (all entries of a name: each
// approved version of the module) under the lock, appends a "revoke" line
// per entry to the audit log, and returns the removed entries. Nothing
// matching is an error wrapping [ErrNotFound].
func (s *Store) Revoke(ctx context.Context, r Revocation) ([]Entry, error) {
	if r.By == "" {
		return nil, errors.New("manifest: Revocation.By is empty: say who revokes")
	}
	var removed []Entry
	err := s.update(ctx, r.By, TrustByRevoke, func(m *Manifest) ([]AuditEntry, error) {
		matches, err := m.resolve(r.Target)
		if err != nil {
			return nil, err
		}
		at := s.now().UTC().Truncate(time.Second)
		var recs []AuditEntry
		for _, e := range matches {
			m.Delete(e.SHA256)
			rec := recordOf(ActionRevoke, e, r.By, at)
			rec.Note = r.Note
			recs = append(recs, rec)
		}
		removed = matches
		return recs, nil
	})
	if err != nil {
		return nil, err
	}
	return removed, nil
}

// resolve finds the entries a revoke target names.
func (m *Manifest) resolve(target string) ([]Entry, error) {
	if e, ok := m.Lookup(target); ok {
		return []Entry{e}, nil
	}
	if byName := m.ByName(target); len(byName) > 0 {
		return byName, nil
	}
	// A tool's name, as recorded at approval: found even when the module
	// file was since changed or removed.
	if byTool := m.filter(func(e Entry) bool { return slices.Contains(e.Tools, target) }); len(byTool) > 0 {
		return byTool, nil
	}
	lower := strings.ToLower(target)
	if len(lower) >= MinPrefix && strings.IndexFunc(lower, func(r rune) bool { return r > 0x7f || !isLowerHex(byte(r)) }) < 0 {
		byPrefix := m.filter(func(e Entry) bool { return strings.HasPrefix(e.SHA256, lower) })
		switch len(byPrefix) {
		case 0:
		case 1:
			return byPrefix, nil
		default:
			var names []string
			for _, e := range byPrefix {
				names = append(names, Short(e.SHA256)+" ("+e.File+")")
			}
			return nil, fmt.Errorf("manifest: %q matches %d approvals: %s; give more digits", target, len(byPrefix), strings.Join(names, ", "))
		}
	}
	return nil, fmt.Errorf("%w %q (give a name, a full sha256, or at least %d hex digits of one)", ErrNotFound, target, MinPrefix)
}

// update runs fn on the current manifest under the lock and, when fn
// succeeds, writes the manifest, appends fn's audit records and, with
// s.Trust, carries the trust of the content before over to the content
// written (see Store.Trust), still under the lock. A manifest that does
// not load is left as it is.
func (s *Store) update(ctx context.Context, by, how string, fn func(*Manifest) ([]AuditEntry, error)) error {
	real, unlock, err := s.lock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	path := real.Path

	m, err := real.Load()
	if err != nil {
		return err
	}
	carry := false
	if s.Trust != nil {
		carry = m.Len() == 0 || s.Trust.Check(s.Path, m.ContentSHA256()) == nil
	}
	recs, err := fn(m)
	if err != nil {
		return err
	}
	data, err := m.MarshalJSON()
	if err != nil {
		return err
	}
	perm := fs.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		perm = fi.Mode().Perm()
	}
	if err := writeFileAtomic(path, data, perm); err != nil {
		return fmt.Errorf("manifest: writing %s: %w", s.Path, err)
	}
	if err := appendLog(real.LogPath(), recs); err != nil {
		return fmt.Errorf("manifest: %s was updated but its audit log was not: %w", s.Path, err)
	}
	if carry {
		if _, err := s.Trust.Trust(ctx, s.Path, Sum(data), by, how); err != nil {
			return fmt.Errorf("manifest: %s was updated but your trust of it was not recorded (run `autoagent tools trust --manifest %s`): %w", s.Path, s.Path, err)
		}
	}
	return nil
}

// lock takes the manifest's lock and returns the store of the real file
// (links followed) and the function that releases the lock.
func (s *Store) lock(ctx context.Context) (*Store, func(), error) {
	if s.Path == "" {
		return nil, nil, errors.New("manifest: Store.Path is empty")
	}
	path, err := resolvePath(s.Path)
	if err != nil {
		return nil, nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, nil, fmt.Errorf("manifest: %w", err)
	}
	real := &Store{Path: path, Now: s.Now}
	for _, side := range []string{real.LockPath(), real.LogPath()} {
		if err := plainOrAbsent(side); err != nil {
			return nil, nil, err
		}
	}
	lock := flock.New(real.LockPath(), flock.SetPermissions(0o644))
	locked, err := lock.TryLockContext(ctx, 10*time.Millisecond)
	if err != nil {
		return nil, nil, fmt.Errorf("manifest: waiting for the lock on %s: %w", real.LockPath(), err)
	}
	if !locked {
		return nil, nil, fmt.Errorf("manifest: could not lock %s", real.LockPath())
	}
	return real, func() { lock.Unlock() }, nil
}

// Pull is a module written into the plugins directory from an OCI
// registry, pending until someone approves it.
type Pull struct {
	// SHA256 is the module's [Sum]; File its file name; Name its name.
	SHA256, File, Name string
	// Source is where it came from. Required.
	Source Source
	// Unsigned reports that its signature was not verified
	// (--allow-unsigned).
	Unsigned bool
	// By names who pulled. Required.
	By string
}

// RecordPull appends a "pull" line to the audit log under the manifest's
// lock. The manifest itself is not changed: a pulled module approves
// nothing.
func (s *Store) RecordPull(ctx context.Context, p Pull) error {
	if p.By == "" {
		return errors.New("manifest: Pull.By is empty: say who pulls")
	}
	if p.Source.IsZero() {
		return errors.New("manifest: Pull.Source is empty")
	}
	if err := p.Source.validate(); err != nil {
		return fmt.Errorf("manifest: invalid pull: source: %w", err)
	}
	real, unlock, err := s.lock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	rec := recordOf(ActionPull, Entry{SHA256: p.SHA256, File: p.File, Name: p.Name, Source: p.Source}, p.By, s.now().Truncate(time.Second))
	rec.Unsigned = p.Unsigned
	return appendLog(real.LogPath(), []AuditEntry{rec})
}

// resolvePath follows a symbolic link at path (or in its directory), so the
// lock and the rename act on the real file whichever name a process uses.
func resolvePath(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("manifest: %w", err)
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		return real, nil
	}
	if dir, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil {
		return filepath.Join(dir, filepath.Base(abs)), nil
	}
	return abs, nil
}

// plainOrAbsent refuses a lock file or audit log that is not a plain
// file: opening a FIFO there blocked approve forever, and a link made it
// write where the link led (found by attacking our own sandbox).
func plainOrAbsent(path string) error {
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("manifest: %w", err)
	case !fi.Mode().IsRegular():
		kind := safefile.Kind(fi.Mode())
		if fi.Mode()&fs.ModeSymlink != 0 {
			kind = "a symbolic link"
		}
		return fmt.Errorf("manifest: %s is %s, not a plain file: remove it and try again", path, kind)
	}
	return nil
}
