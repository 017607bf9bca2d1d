package loop

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
)

// FileStore keeps a run durable on disk: the latest state in a file and
// the tool-call journal beside it (PATH.journal). It is what `autoagent run
// --checkpoint FILE` and `autoagent resume FILE` use.
//
//	store, err := loop.OpenFileStore("run.state.json")
//	if err != nil { ... }
//	defer store.Close()
//	store.Attach(agent)           // sets agent.Checkpoint and agent.Journal
//	res, err := agent.Run(ctx, prompt)
//	// after a crash, a pause or a bound, in this process or another:
//	st, err := store.Load()
//	res, err = agent.Resume(ctx, st, loop.Approve("call_2_1"))
type FileStore struct {
	path    string
	journal *FileJournal
}

// OpenFileStore opens the store whose state lives at path (it need not
// exist yet) and opens, or creates, its journal at path + ".journal".
func OpenFileStore(path string) (*FileStore, error) {
	j, err := OpenFileJournal(path + ".journal")
	if err != nil {
		return nil, err
	}
	return &FileStore{path: path, journal: j}, nil
}

// Path returns the state file's path.
func (s *FileStore) Path() string { return s.path }

// Journal returns the store's journal.
func (s *FileStore) Journal() *FileJournal { return s.journal }

// Checkpoint saves st; it is a checkpoint callback.
func (s *FileStore) Checkpoint(_ context.Context, st *RunState) error { return SaveState(s.path, st) }

// Attach sets a's Checkpoint and Journal to the store's.
func (s *FileStore) Attach(a *Agent) {
	a.Checkpoint = s.Checkpoint
	a.Journal = s.journal
}

// Load reads the saved state. A missing file is an error wrapping
// os.ErrNotExist.
func (s *FileStore) Load() (*RunState, error) { return LoadState(s.path) }

// Close closes the journal.
func (s *FileStore) Close() error { return s.journal.Close() }

// writeFileAtomic writes data to a temporary file in path's directory,
// syncs it and renames it over path, then syncs the directory.
func writeFileAtomic(path string, data []byte) (err error) {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("loop: saving state: %w", err)
	}
	defer func() {
		if err != nil {
			os.Remove(tmp.Name())
		}
	}()
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return fmt.Errorf("loop: saving state: %w", err)
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("loop: saving state: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("loop: saving state: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("loop: saving state: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("loop: saving state: %w", err)
	}
	// Make the rename itself durable. Best effort: not every platform can
	// sync a directory, and the data is already safe in the file.
	if d, derr := os.Open(dir); derr == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}
