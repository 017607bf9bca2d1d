package manifest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/gofrs/flock"

	"github.com/autoagent-go/autoagent/internal/safefile"
)

// TrustEnv names the environment variable that sets the trust store's path
// ([DefaultTrustPath]); tests and CI point it at a file of their own.
const TrustEnv = "AUTOAGENT_TRUST"

// ErrUntrusted is matched (errors.Is) by the *[UntrustedError] of a
// manifest whose exact content this user has not trusted.
var ErrUntrusted = errors.New("manifest: not trusted")

// ErrNotTrusted is wrapped by [TrustStore.Untrust]'s error when the store
// holds no trust for the manifest.
var ErrNotTrusted = errors.New("manifest: no trust recorded")

// UntrustedError says why a manifest's approvals do not count: this user
// never trusted it, or trusted other content at the same path.
type UntrustedError struct {
	// Manifest is the manifest's path as given; Key is the path the trust
	// store knows it by ([TrustKey]).
	Manifest, Key string
	// SHA256 is the sum of the content read.
	SHA256 string
	// Trusted is the record of what was trusted at this path before, nil
	// when nothing was.
	Trusted *TrustRecord
	// Store is the trust store's path.
	Store string
}

func (e *UntrustedError) Error() string {
	why := "you have not trusted it"
	if e.Trusted != nil {
		why = fmt.Sprintf("it changed since you trusted it (sha256 %s then, %s now)", Short(e.Trusted.SHA256), Short(e.SHA256))
	}
	return fmt.Sprintf("manifest %s: %s, so its approvals do not count: review and trust it with `autoagent tools trust --manifest %s`",
		e.Manifest, why, e.Manifest)
}

// Is matches ErrUntrusted.
func (e *UntrustedError) Is(target error) bool { return target == ErrUntrusted }

// The ways a trust was recorded ([TrustRecord.How]).
const (
	// TrustByReview: a person reviewed the manifest and trusted it
	// (`autoagent tools trust`).
	TrustByReview = "trust"
	// TrustByApprove and TrustByRevoke: this user changed a manifest whose
	// content they trusted, so the content they wrote is trusted too.
	TrustByApprove = "approve"
	TrustByRevoke  = "revoke"
)

// TrustRecord is what a trust store holds for one manifest: the sum of the
// one content trusted at its path.
type TrustRecord struct {
	// Manifest is the key: the manifest's path ([TrustKey]).
	Manifest string `json:"manifest"`
	// Resolved is where the path led when trusted (links followed).
	Resolved string    `json:"resolved"`
	SHA256   string    `json:"sha256"`
	By       string    `json:"by"`
	At       time.Time `json:"at"`
	How      string    `json:"how"`
}

// TrustStore is one user's record of the manifests they trust, kept
// outside every checkout ([DefaultTrustPath]): for each manifest, by its
// path, the sha256 of the exact content trusted. A manifest found in a
// working directory is written by whoever wrote the checkout; its
// approvals count only once this user trusted its content, as `direnv
// allow` or an editor's workspace trust does. One content per path: a
// change by anyone else, a branch switch included, voids the trust
// (RATIONALE.md).
//
// Changes are read-modify-write cycles under an exclusive lock on
// PATH.lock and replace the file atomically, as [Store]'s do.
type TrustStore struct {
	// Path is the store's file, e.g. ~/.config/autoagent/trust.json.
	Path string
	// Outside are directories the store must not lie in (the working
	// directory, a checkout's): a store a checkout could write is refused
	// by every method. The directory of the manifest being judged is
	// always one.
	Outside []string
	// Now returns the time recorded; nil means time.Now.
	Now func() time.Time
}

// DefaultTrustPath returns the trust store's path: $AUTOAGENT_TRUST when
// set (it must be absolute), else $XDG_CONFIG_HOME/autoagent/trust.json
// when XDG_CONFIG_HOME is absolute (a relative one is ignored, as the XDG
// specification says), else ~/.config/autoagent/trust.json (the user
// configuration directory on Windows).
func DefaultTrustPath() (string, error) {
	if p := os.Getenv(TrustEnv); p != "" {
		if !filepath.IsAbs(p) {
			return "", fmt.Errorf("manifest: $%s=%s is not an absolute path: name the trust store's file from the root", TrustEnv, p)
		}
		return filepath.Clean(p), nil
	}
	if x := os.Getenv("XDG_CONFIG_HOME"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "autoagent", "trust.json"), nil
	}
	var base string
	if runtime.GOOS == "windows" {
		dir, err := os.UserConfigDir()
		if err != nil {
			return "", fmt.Errorf("manifest: no trust store: %w (set $%s)", err, TrustEnv)
		}
		base = dir
	} else {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("manifest: no trust store: %w (set $%s)", err, TrustEnv)
		}
		base = filepath.Join(home, ".config")
	}
	return filepath.Join(base, "autoagent", "trust.json"), nil
}

// TrustKey returns the path a trust store knows a manifest by: absolute,
// with the links among its directories resolved but not a link at the
// file itself. So `plugins/manifest.json` and its absolute spelling are
// one manifest, and a link planted at a manifest's place pointing to a
// trusted manifest elsewhere is another, untrusted one.
func TrustKey(manifestPath string) (string, error) {
	abs, err := filepath.Abs(manifestPath)
	if err != nil {
		return "", fmt.Errorf("manifest: %w", err)
	}
	if dir, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil {
		return filepath.Join(dir, filepath.Base(abs)), nil
	}
	return abs, nil
}

func (t *TrustStore) now() time.Time {
	if t.Now != nil {
		return t.Now()
	}
	return time.Now()
}

// Check returns nil when sum is the content this store trusts for the
// manifest at manifestPath, an *[UntrustedError] when it is not, and
// another error when the store cannot be read or lies where a checkout
// could have written it.
func (t *TrustStore) Check(manifestPath, sum string) error {
	key, err := TrustKey(manifestPath)
	if err != nil {
		return err
	}
	if err := t.checkPlace(filepath.Dir(key)); err != nil {
		return err
	}
	records, err := t.load()
	if err != nil {
		return err
	}
	rec, ok := records[key]
	if ok && rec.SHA256 == sum {
		return nil
	}
	ue := &UntrustedError{Manifest: manifestPath, Key: key, SHA256: sum, Store: t.Path}
	if ok {
		ue.Trusted = &rec
	}
	return ue
}

// Record returns what the store holds for the manifest at manifestPath.
func (t *TrustStore) Record(manifestPath string) (TrustRecord, bool, error) {
	key, err := TrustKey(manifestPath)
	if err != nil {
		return TrustRecord{}, false, err
	}
	if err := t.checkPlace(filepath.Dir(key)); err != nil {
		return TrustRecord{}, false, err
	}
	records, err := t.load()
	if err != nil {
		return TrustRecord{}, false, err
	}
	rec, ok := records[key]
	return rec, ok, nil
}

// Records returns every record, by manifest path.
func (t *TrustStore) Records() ([]TrustRecord, error) {
	if err := t.checkPlace(); err != nil {
		return nil, err
	}
	records, err := t.load()
	if err != nil {
		return nil, err
	}
	out := make([]TrustRecord, 0, len(records))
	for _, r := range records {
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b TrustRecord) int { return strings.Compare(a.Manifest, b.Manifest) })
	return out, nil
}

// Trust records sum as the trusted content of the manifest at
// manifestPath, replacing what was trusted there before. by says who, how
// is TrustByReview, TrustByApprove or TrustByRevoke.
func (t *TrustStore) Trust(ctx context.Context, manifestPath, sum, by, how string) (TrustRecord, error) {
	if !ValidSum(sum) {
		return TrustRecord{}, fmt.Errorf("manifest: trust: sha256 %q: want 64 lower-case hex digits", sum)
	}
	if by == "" {
		return TrustRecord{}, errors.New("manifest: trust: say who trusts")
	}
	key, err := TrustKey(manifestPath)
	if err != nil {
		return TrustRecord{}, err
	}
	resolved := key
	if r, err := filepath.EvalSymlinks(key); err == nil {
		resolved = r
	}
	rec := TrustRecord{Manifest: key, Resolved: resolved, SHA256: sum, By: by, At: t.now().UTC().Truncate(time.Second), How: how}
	err = t.update(ctx, filepath.Dir(key), func(records map[string]TrustRecord) error {
		records[key] = rec
		return nil
	})
	return rec, err
}

// Untrust removes the trust of the manifest at manifestPath and returns
// what was trusted; nothing recorded is an error wrapping [ErrNotTrusted].
func (t *TrustStore) Untrust(ctx context.Context, manifestPath string) (TrustRecord, error) {
	key, err := TrustKey(manifestPath)
	if err != nil {
		return TrustRecord{}, err
	}
	var removed TrustRecord
	err = t.update(ctx, filepath.Dir(key), func(records map[string]TrustRecord) error {
		rec, ok := records[key]
		if !ok {
			return fmt.Errorf("%w for %s in %s", ErrNotTrusted, key, t.Path)
		}
		removed = rec
		delete(records, key)
		return nil
	})
	return removed, err
}

// checkPlace refuses a store that lies in one of t.Outside or in dirs:
// whoever can write there could trust anything.
func (t *TrustStore) checkPlace(dirs ...string) error {
	if t.Path == "" {
		return errors.New("manifest: TrustStore.Path is empty")
	}
	if !filepath.IsAbs(t.Path) {
		return fmt.Errorf("manifest: trust store %s: not an absolute path", t.Path)
	}
	store := resolvedGrantPath(t.Path)
	for _, d := range append(slices.Clone(t.Outside), dirs...) {
		if d == "" {
			continue
		}
		if within(store, resolvedGrantPath(d)) {
			return fmt.Errorf("manifest: refusing the trust store %s: it lies inside %s, where a checkout could have written it; keep it outside (set $%s to a file elsewhere, or unset XDG_CONFIG_HOME)",
				t.Path, d, TrustEnv)
		}
	}
	return nil
}

// trustFile is the store's layout.
type trustFile struct {
	Version   int           `json:"version"`
	Manifests []TrustRecord `json:"manifests"`
}

// maxTrustBytes bounds the store file read.
const maxTrustBytes = 16 << 20

// load reads the store; a missing file trusts nothing.
func (t *TrustStore) load() (map[string]TrustRecord, error) {
	records := map[string]TrustRecord{}
	data, err := safefile.Read(t.Path, maxTrustBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return records, nil
	}
	if err != nil {
		return nil, fmt.Errorf("manifest: trust store: %w", err)
	}
	if err := privateFile(t.Path); err != nil {
		return nil, err
	}
	var f trustFile
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("manifest: trust store %s is corrupt (%v): fix or remove it (every manifest is then untrusted)", t.Path, err)
	}
	if f.Version != 1 {
		return nil, fmt.Errorf("manifest: trust store %s: version %d: %w", t.Path, f.Version, ErrUnsupportedVersion)
	}
	for _, r := range f.Manifests {
		if !ValidSum(r.SHA256) || !filepath.IsAbs(r.Manifest) {
			return nil, fmt.Errorf("manifest: trust store %s is corrupt: record %q: fix or remove it", t.Path, r.Manifest)
		}
		records[r.Manifest] = r
	}
	return records, nil
}

// update runs fn on the records under the lock and writes them.
func (t *TrustStore) update(ctx context.Context, manifestDir string, fn func(map[string]TrustRecord) error) error {
	if err := t.checkPlace(manifestDir); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(t.Path), 0o700); err != nil {
		return fmt.Errorf("manifest: trust store: %w", err)
	}
	if err := plainOrAbsent(t.Path + ".lock"); err != nil {
		return err
	}
	lock := flock.New(t.Path+".lock", flock.SetPermissions(0o600))
	locked, err := lock.TryLockContext(ctx, 10*time.Millisecond)
	if err != nil {
		return fmt.Errorf("manifest: waiting for the lock on %s.lock: %w", t.Path, err)
	}
	if !locked {
		return fmt.Errorf("manifest: could not lock %s.lock", t.Path)
	}
	defer lock.Unlock()
	records, err := t.load()
	if err != nil {
		return err
	}
	if err := fn(records); err != nil {
		return err
	}
	f := trustFile{Version: 1, Manifests: []TrustRecord{}}
	for _, r := range records {
		f.Manifests = append(f.Manifests, r)
	}
	slices.SortFunc(f.Manifests, func(a, b TrustRecord) int { return strings.Compare(a.Manifest, b.Manifest) })
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	if err := writeFileAtomic(t.Path, append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("manifest: writing the trust store %s: %w", t.Path, err)
	}
	return nil
}
