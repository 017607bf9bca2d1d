package loop

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/gofrs/flock"
)

// JournalStatus is the state of a call in a [Journal].
type JournalStatus string

// The journal statuses.
const (
	// JournalStarted is recorded (durably) before a call runs.
	JournalStarted JournalStatus = "started"
	// JournalFinished is recorded after it ran, with its result.
	JournalFinished JournalStatus = "finished"
)

// JournalEntry is one record of a [Journal].
type JournalEntry struct {
	RunID  string        `json:"run_id"`
	CallID string        `json:"call_id"`
	Name   string        `json:"name"`
	Step   int           `json:"step"`
	Status JournalStatus `json:"status"`
	// Digest is the call's digest (its tool and canonical arguments):
	// an entry answers only the call it was recorded for, so a re-run
	// that makes another call under the same id is refused, not given
	// this call's result. Entries of older builds have none.
	Digest string `json:"digest,omitempty"`
	// The result as the tool produced it (before the loop bounds or frames
	// it), for finished entries.
	Content        string `json:"content,omitempty"`
	IsError        bool   `json:"is_error,omitempty"`
	Infrastructure bool   `json:"infrastructure,omitempty"`
	Untrusted      bool   `json:"untrusted,omitempty"`
	// Refusal is the kind of the refusal the loop wrote in place of the
	// tool's answer (a timeout), if it did (see package loop/refusal).
	Refusal string    `json:"refusal,omitempty"`
	Time    time.Time `json:"ts"`
}

// Journal makes tool side effects exactly-once across crashes.
//
// The loop records JournalStarted before a call runs and JournalFinished
// after, and checkpoints the turn's calls before running any (see
// [Agent.Checkpoint]). On resume from such a checkpoint it looks each call
// up:
//
//   - finished: the recorded result is used; the tool does not run again;
//   - started but not finished (the crash came while it ran, or before the
//     result was recorded): the outcome is unknown, so the tool is not run
//     again unless it is flagged Idempotent; the model is told
//     "OutcomeUnknown: …" and can check before retrying;
//   - absent: the call never started and runs now.
//
// A call that failed once the run was cancelled is left "started": its
// failure is most likely the cancellation, not an outcome to replay.
//
// For side effects that must happen exactly once even when the outcome is
// unknown, pass [CallInfo.IdempotencyKey] to a service that deduplicates.
//
// Record must be durable when it returns (a crash right after must not lose
// the entry); an error stops the run, and a call whose start could not be
// recorded does not run. Lookup returns the latest entry for the call.
// Implementations must be safe for concurrent use (parallel calls).
type Journal interface {
	Record(ctx context.Context, e JournalEntry) error
	Lookup(ctx context.Context, runID, callID string) (JournalEntry, bool, error)
}

type journalKey struct{ run, call string }

// MemoryJournal is a Journal held in memory: exactly-once within a
// process (a Resume after a failed checkpoint, for instance), for tests.
type MemoryJournal struct {
	mu      sync.Mutex
	latest  map[journalKey]JournalEntry
	entries []JournalEntry
}

// NewMemoryJournal returns an empty in-memory journal.
func NewMemoryJournal() *MemoryJournal { return &MemoryJournal{latest: map[journalKey]JournalEntry{}} }

// Record stores e.
func (j *MemoryJournal) Record(_ context.Context, e JournalEntry) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.latest[journalKey{e.RunID, e.CallID}] = e
	j.entries = append(j.entries, e)
	return nil
}

// Lookup returns the latest entry for the call.
func (j *MemoryJournal) Lookup(_ context.Context, runID, callID string) (JournalEntry, bool, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	e, ok := j.latest[journalKey{runID, callID}]
	return e, ok, nil
}

// Entries returns every entry recorded, in order.
func (j *MemoryJournal) Entries() []JournalEntry {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]JournalEntry(nil), j.entries...)
}

// FileJournal is a Journal in a JSONL file: one entry per line, each
// written and fsynced before Record returns. A lock file (PATH.lock) keeps
// a second process from using the same journal at once.
type FileJournal struct {
	path   string
	mu     sync.Mutex
	f      *os.File
	lock   *flock.Flock
	latest map[journalKey]JournalEntry
}

// ErrJournalLocked is returned by OpenFileJournal when another process
// holds the journal.
var ErrJournalLocked = errors.New("loop: journal is in use by another process")

// OpenFileJournal opens (or creates) the journal at path. A last line cut
// short by a crash is dropped (its record never completed, so the call it
// announced never started, or its result is unknown, which the previous
// record says); any other malformed line is an error naming it.
func OpenFileJournal(path string) (*FileJournal, error) {
	lock := flock.New(path + ".lock")
	ok, err := lock.TryLock()
	if err != nil {
		return nil, fmt.Errorf("loop: locking journal %s: %w", path, err)
	}
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrJournalLocked, path)
	}
	j, err := openJournalFile(path)
	if err != nil {
		_ = lock.Unlock()
		return nil, err
	}
	j.lock = lock
	return j, nil
}

func openJournalFile(path string) (*FileJournal, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("loop: opening journal: %w", err)
	}
	j := &FileJournal{path: path, f: f, latest: map[journalKey]JournalEntry{}}
	good, err := j.load()
	if err != nil {
		f.Close()
		return nil, err
	}
	// Drop a torn last line so the next record starts on a line of its own.
	if err := f.Truncate(good); err != nil {
		f.Close()
		return nil, fmt.Errorf("loop: journal %s: %w", path, err)
	}
	if _, err := f.Seek(good, io.SeekStart); err != nil {
		f.Close()
		return nil, fmt.Errorf("loop: journal %s: %w", path, err)
	}
	return j, nil
}

// load reads the entries and returns the length of the complete lines.
func (j *FileJournal) load() (int64, error) {
	br := bufio.NewReader(j.f)
	var good int64
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if errors.Is(err, io.EOF) {
			return good, nil // a partial last line (no newline) is dropped
		}
		if err != nil {
			return 0, fmt.Errorf("loop: reading journal %s: %w", j.path, err)
		}
		if t := bytes.TrimSpace(line); len(t) > 0 {
			var e JournalEntry
			if err := json.Unmarshal(t, &e); err != nil || e.RunID == "" || e.CallID == "" {
				return 0, fmt.Errorf("loop: journal %s: line %d is not a journal entry; the file is damaged (move it aside to start over, and check the calls it records by hand)", j.path, n)
			}
			j.latest[journalKey{e.RunID, e.CallID}] = e
		}
		good += int64(len(line))
	}
}

// Record appends e and syncs the file.
func (j *FileJournal) Record(_ context.Context, e JournalEntry) error {
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil {
		return errors.New("loop: journal is closed")
	}
	if _, err := j.f.Write(b); err != nil {
		return err
	}
	if err := j.f.Sync(); err != nil {
		return err
	}
	j.latest[journalKey{e.RunID, e.CallID}] = e
	return nil
}

// Lookup returns the latest entry for the call.
func (j *FileJournal) Lookup(_ context.Context, runID, callID string) (JournalEntry, bool, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	e, ok := j.latest[journalKey{runID, callID}]
	return e, ok, nil
}

// Close closes the file and releases the lock.
func (j *FileJournal) Close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil {
		return nil
	}
	err := j.f.Close()
	j.f = nil
	if j.lock != nil {
		err = errors.Join(err, j.lock.Unlock())
	}
	return err
}
