package memory

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/gofrs/flock"
)

// jsonStoreVersion is the format version written in every store file.
const jsonStoreVersion = 1

// JSONStoreOptions configures [OpenJSONStore]. The zero value is right for
// most uses.
type JSONStoreOptions struct {
	// QuarantineCorrupt, when set, moves a corrupt store file aside (to
	// PATH.corrupt-TIMESTAMP) and starts with an empty store instead of
	// failing. Off by default: a corrupt file is an error, never silently
	// an empty memory.
	QuarantineCorrupt bool
	// Logger receives a warning when a file is quarantined. Nil discards.
	Logger *slog.Logger
}

// JSONStore is the default [FactStore]: one human-readable, indented JSON
// file per identity, which a person can read, diff and edit. Embedding
// vectors, which are large and not meant for people, go to a sidecar file
// PATH.vectors.json.
//
// Writes are atomic (temporary file, fsync, rename, fsync of the
// directory), so a crash leaves the old or the new file, never half of one.
// Updates hold an exclusive lock on PATH.lock and re-read the file when
// another process changed it, so processes sharing a file do not lose each
// other's facts. Files are created with mode 0600: they describe people.
type JSONStore struct {
	path string
	lock *flock.Flock

	mu      sync.Mutex
	state   *FactState
	stamp   fileStamp
	model   string
	vectors map[int64][]float32
	vloaded bool
}

var _ FactStore = (*JSONStore)(nil)

// fileStamp identifies a version of a file on disk.
type fileStamp struct {
	mod  time.Time
	size int64
	ok   bool
}

func stampOf(path string) fileStamp {
	fi, err := os.Stat(path)
	if err != nil {
		return fileStamp{}
	}
	return fileStamp{mod: fi.ModTime(), size: fi.Size(), ok: true}
}

// storeFile is the on-disk shape.
type storeFile struct {
	Version  int      `json:"version"`
	Identity string   `json:"identity,omitempty"`
	NextID   int64    `json:"next_id"`
	Facts    []Record `json:"facts"`
}

// OpenJSONStore opens (or prepares to create) the store file at path and
// loads it. A missing file is an empty store; a file that exists but is not
// a valid store is a *[CorruptStoreError] naming it, unless
// opts.QuarantineCorrupt is set.
func OpenJSONStore(path string, opts JSONStoreOptions) (*JSONStore, error) {
	if path == "" {
		return nil, invalidf("JSON store path is empty")
	}
	s := &JSONStore{path: path, lock: flock.New(path + ".lock")}
	st, stamp, err := readStoreFile(path)
	var corrupt *CorruptStoreError
	if errors.As(err, &corrupt) && opts.QuarantineCorrupt {
		aside := path + ".corrupt-" + time.Now().UTC().Format("20060102T150405.000000000Z")
		if rerr := os.Rename(path, aside); rerr != nil {
			return nil, fmt.Errorf("memory: quarantining corrupt store %s: %w", path, rerr)
		}
		if opts.Logger != nil {
			opts.Logger.Warn("memory: corrupt fact store moved aside; starting empty", "path", path, "moved_to", aside, "error", corrupt.Err)
		}
		st, stamp, err = &FactState{NextID: 1}, fileStamp{}, nil
	}
	if err != nil {
		return nil, err
	}
	s.state, s.stamp = st, stamp
	return s, nil
}

// Path returns the store file's path.
func (s *JSONStore) Path() string { return s.path }

// readStoreFile reads and validates a store file. A missing file is an
// empty state.
func readStoreFile(path string) (*FactState, fileStamp, error) {
	stamp := stampOf(path)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &FactState{NextID: 1}, fileStamp{}, nil
	}
	if err != nil {
		return nil, fileStamp{}, fmt.Errorf("memory: reading fact store: %w", err)
	}
	st, err := decodeStore(data)
	if err != nil {
		return nil, fileStamp{}, &CorruptStoreError{Path: path, Err: err}
	}
	return st, stamp, nil
}

// decodeStore parses and checks a store file's bytes.
func decodeStore(data []byte) (*FactState, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, errors.New("the file is empty")
	}
	var f storeFile
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&f); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("data after the JSON object")
	}
	if f.Version > jsonStoreVersion {
		return nil, fmt.Errorf("format version %d is newer than this program understands (%d)", f.Version, jsonStoreVersion)
	}
	seen := make(map[int64]bool, len(f.Facts))
	for i := range f.Facts {
		r := &f.Facts[i]
		switch {
		case r.ID <= 0:
			return nil, fmt.Errorf("fact #%d has id %d; ids are positive", i+1, r.ID)
		case seen[r.ID]:
			return nil, fmt.Errorf("id %d is used twice", r.ID)
		}
		seen[r.ID] = true
		// Records written by hand or by older versions may lack
		// provenance and validity; fill them as those versions meant.
		if !r.Source.Valid() {
			r.Source = SourceAgent
		}
		if r.ValidFrom.IsZero() {
			r.ValidFrom = r.Updated
		}
	}
	st := &FactState{Identity: f.Identity, NextID: f.NextID, Facts: f.Facts}
	st.normalize()
	return st, nil
}

// Load implements [FactStore]. It re-reads the file when another process
// changed it since the last read or write.
func (s *JSONStore) Load(ctx context.Context) (*FactState, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.refresh(); err != nil {
		return nil, err
	}
	return s.state.clone(), nil
}

// refresh re-reads the file if it changed on disk. Callers hold s.mu.
func (s *JSONStore) refresh() error {
	if stampOf(s.path) == s.stamp {
		return nil
	}
	st, stamp, err := readStoreFile(s.path)
	if err != nil {
		return err
	}
	s.state, s.stamp = st, stamp
	return nil
}

// Update implements [FactStore].
func (s *JSONStore) Update(ctx context.Context, fn func(*FactState) error) (*FactState, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.lockFile(ctx); err != nil {
		return nil, err
	}
	defer s.lock.Unlock()
	if err := s.refresh(); err != nil {
		return nil, err
	}
	next := s.state.clone()
	if err := fn(next); err != nil {
		return nil, err
	}
	next.normalize()
	data, err := encodeStore(next)
	if err != nil {
		return nil, err
	}
	if err := writeFileAtomic(s.path, data); err != nil {
		return nil, err
	}
	s.state, s.stamp = next, stampOf(s.path)
	return next.clone(), nil
}

func (s *JSONStore) lockFile(ctx context.Context) error {
	if err := os.MkdirAll(filepath.Dir(s.path), 0o700); err != nil {
		return fmt.Errorf("memory: creating fact store directory: %w", err)
	}
	ok, err := s.lock.TryLockContext(ctx, 10*time.Millisecond)
	if err != nil {
		return fmt.Errorf("memory: locking fact store %s: %w", s.path, err)
	}
	if !ok {
		return fmt.Errorf("memory: locking fact store %s: %w", s.path, ctx.Err())
	}
	return nil
}

func encodeStore(st *FactState) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	facts := st.Facts
	if facts == nil {
		facts = []Record{}
	}
	if err := enc.Encode(storeFile{Version: jsonStoreVersion, Identity: st.Identity, NextID: st.NextID, Facts: facts}); err != nil {
		return nil, fmt.Errorf("memory: encoding fact store: %w", err)
	}
	return buf.Bytes(), nil
}

// vectorFile is the sidecar's shape.
type vectorFile struct {
	Model   string               `json:"model"`
	Vectors map[string][]float32 `json:"vectors"`
}

func (s *JSONStore) vectorPath() string { return s.path + ".vectors.json" }

// LoadVectors implements [FactStore]. A corrupt sidecar is an error naming
// it; vectors can always be recomputed, so deleting the file is safe.
func (s *JSONStore) LoadVectors(ctx context.Context, model string) (map[int64][]float32, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.vloaded {
		data, err := os.ReadFile(s.vectorPath())
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return nil, fmt.Errorf("memory: reading vectors: %w", err)
		default:
			var vf vectorFile
			if err := json.Unmarshal(data, &vf); err != nil {
				return nil, &CorruptStoreError{Path: s.vectorPath(), Err: err}
			}
			s.model = vf.Model
			s.vectors = make(map[int64][]float32, len(vf.Vectors))
			for k, v := range vf.Vectors {
				id, err := strconv.ParseInt(k, 10, 64)
				if err != nil {
					return nil, &CorruptStoreError{Path: s.vectorPath(), Err: fmt.Errorf("key %q is not a fact id", k)}
				}
				s.vectors[id] = v
			}
		}
		s.vloaded = true
	}
	out := make(map[int64][]float32)
	if model != s.model {
		return out, nil
	}
	for id, v := range s.vectors {
		out[id] = v
	}
	return out, nil
}

// SaveVectors implements [FactStore].
func (s *JSONStore) SaveVectors(ctx context.Context, model string, vectors map[int64][]float32) error {
	vf := vectorFile{Model: model, Vectors: make(map[string][]float32, len(vectors))}
	kept := make(map[int64][]float32, len(vectors))
	for id, v := range vectors {
		vf.Vectors[strconv.FormatInt(id, 10)] = v
		kept[id] = v
	}
	data, err := json.Marshal(vf)
	if err != nil {
		return fmt.Errorf("memory: encoding vectors: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := writeFileAtomic(s.vectorPath(), data); err != nil {
		return err
	}
	s.model, s.vectors, s.vloaded = model, kept, true
	return nil
}

// writeFileAtomic replaces path with data so that a crash leaves either the
// old or the new content: write a temporary file in the same directory,
// fsync it, rename it over path, fsync the directory.
func writeFileAtomic(path string, data []byte) (err error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("memory: creating directory for %s: %w", path, err)
	}
	tmp, err := os.CreateTemp(dir, filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("memory: writing %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			_ = os.Remove(tmp.Name())
		}
	}()
	if err := tmp.Chmod(0o600); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("memory: writing %s: %w", path, err)
	}
	if _, err := tmp.Write(data); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("memory: writing %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("memory: syncing %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("memory: writing %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("memory: replacing %s: %w", path, err)
	}
	if d, derr := os.Open(dir); derr == nil {
		// Persist the rename itself; some filesystems refuse to sync a
		// directory, which is not worth failing a write that succeeded.
		_ = d.Sync()
		_ = d.Close()
	}
	return nil
}
