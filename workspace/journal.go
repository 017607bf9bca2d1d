package workspace

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync/atomic"
	"time"
)

// Op names what a change did.
type Op string

// The operations a journal records.
const (
	OpWrite    Op = "write"
	OpAppend   Op = "append"
	OpDelete   Op = "delete"
	OpRename   Op = "rename"
	OpModule   Op = "module"   // a sandboxed module's change under an fs.workspace grant
	OpEvolve   Op = "evolve"   // a proposal applied by Evolve
	OpRollback Op = "rollback" // the undoing of other changes
)

// State is where a change stands.
type State string

// The states of a change.
const (
	// Pending: begun, not done; seen only by recovery.
	Pending State = "pending"
	// Done: the change took effect.
	Done State = "done"
	// Aborted: the change failed or a crash interrupted it; its files got
	// their before-images back.
	Aborted State = "aborted"
)

// Change is one journaled change of one or more files.
type Change struct {
	ID     int          `json:"id"`
	Op     Op           `json:"op"`
	Path   string       `json:"path"`         // the first file's path
	To     string       `json:"to,omitempty"` // a rename's target
	RunID  string       `json:"run_id,omitempty"`
	CallID string       `json:"call_id,omitempty"`
	Tool   string       `json:"tool,omitempty"`
	Time   time.Time    `json:"time"`
	Reason string       `json:"reason,omitempty"`
	Undoes []int        `json:"undoes,omitempty"` // a rollback's changes
	Files  []FileChange `json:"files"`
	State  State        `json:"state,omitempty"`
	// RolledBackBy is the rollback that undid the change, 0 when it
	// stands. Changes and Change fill it in; the journal does not hold it.
	RolledBackBy int `json:"rolled_back_by,omitempty"`
}

// FileChange is what a change did to one file. A hash is the hex SHA-256
// of the content; "" means the file was absent.
type FileChange struct {
	Path   string `json:"path"`
	Before string `json:"before"`
	After  string `json:"after"`
	// AfterUnknown: a sandboxed module made the change, after the journal
	// took the before-image, so its result is not known.
	AfterUnknown bool `json:"after_unknown,omitempty"`
	// MadeDirs are the directories the change made for the file, which a
	// rollback removes when they are empty.
	MadeDirs []string `json:"made_dirs,omitempty"`
}

// record is one line of the journal.
type record struct {
	K      string  `json:"k"` // begin, done, abort
	ID     int     `json:"id"`
	Change *Change `json:"change,omitempty"`
}

// journalState is what the journal says, as far as it has been read.
type journalState struct {
	off     int64
	changes []*Change // changes[i].ID == i+1
	pending map[int]bool
}

// catchUp reads the journal from where it was last read (other processes
// append to it), reporting whether it found records this process did not
// write. A torn last line (a writer killed mid-line) is cut off. The
// caller holds the lock.
func (w *Workspace) catchUp() (bool, error) {
	fi, err := w.journal.Stat()
	if err != nil {
		return false, fmt.Errorf("workspace: %w", err)
	}
	if fi.Size() < w.state.off {
		w.state = journalState{}
	}
	if fi.Size() == w.state.off {
		return false, nil
	}
	buf := make([]byte, fi.Size()-w.state.off)
	if _, err := w.journal.ReadAt(buf, w.state.off); err != nil && !errors.Is(err, io.EOF) {
		return false, fmt.Errorf("workspace: reading the journal: %w", err)
	}
	found := false
	for len(buf) > 0 {
		i := bytes.IndexByte(buf, '\n')
		var r record
		if i < 0 || json.Unmarshal(buf[:i], &r) != nil {
			if i < 0 || i == len(buf)-1 {
				// A torn last line: its change never began or never
				// finished, and recovery treats it so.
				if err := w.journal.Truncate(w.state.off); err != nil {
					return found, fmt.Errorf("workspace: cutting a torn journal line: %w", err)
				}
				return found, nil
			}
			return found, &CorruptError{Offset: w.state.off, Err: json.Unmarshal(buf[:i], &r)}
		}
		if err := w.state.apply(r); err != nil {
			return found, &CorruptError{Offset: w.state.off, Err: err}
		}
		found = true
		w.state.off += int64(i + 1)
		buf = buf[i+1:]
	}
	return found, nil
}

// apply adds one record to the state.
func (s *journalState) apply(r record) error {
	switch r.K {
	case "begin":
		if r.Change == nil || r.ID != len(s.changes)+1 || r.Change.ID != r.ID {
			return fmt.Errorf("change %d out of sequence (next is %d)", r.ID, len(s.changes)+1)
		}
		c := r.Change
		c.State = Pending
		s.changes = append(s.changes, c)
		if s.pending == nil {
			s.pending = map[int]bool{}
		}
		s.pending[c.ID] = true
	case "done", "abort":
		if !s.pending[r.ID] {
			return fmt.Errorf("%s of change %d, which is not pending", r.K, r.ID)
		}
		delete(s.pending, r.ID)
		s.changes[r.ID-1].State = map[string]State{"done": Done, "abort": Aborted}[r.K]
	default:
		return fmt.Errorf("unknown record %q", r.K)
	}
	return nil
}

// syncs counts the fsyncs of every workspace, for the tests.
var syncs atomic.Int64

// appendRecord writes one line to the journal, synced when sync is set.
// A begin is synced: the before-images it names must be findable after a
// crash. A done or abort need not be: lost, its change is undone at the
// next Open, which leaves the file as it was before it.
func (w *Workspace) appendRecord(r record, sync bool) error {
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("workspace: %w", err)
	}
	b = append(b, '\n')
	if _, err := w.journal.Write(b); err != nil {
		return fmt.Errorf("workspace: writing the journal: %w", err)
	}
	if sync && w.sync {
		syncs.Add(1)
		if err := w.journal.Sync(); err != nil {
			return fmt.Errorf("workspace: syncing the journal: %w", err)
		}
	}
	w.state.off += int64(len(b))
	return w.state.apply(r)
}

// recover undoes the pending changes, newest first: a crash interrupted
// them. The caller holds the lock.
func (w *Workspace) recover() error {
	ids := make([]int, 0, len(w.state.pending))
	for id := range w.state.pending {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range slices.Backward(ids) {
		c := w.state.changes[id-1]
		if err := w.restoreBefore(c); err != nil {
			return fmt.Errorf("workspace: undoing change %d, which a crash interrupted: %w", id, err)
		}
		if err := w.appendRecord(record{K: "abort", ID: id}, true); err != nil {
			return err
		}
	}
	return nil
}

// restoreBefore gives each of c's files its before-image back, last file
// first, and removes the directories c made that are now empty.
func (w *Workspace) restoreBefore(c *Change) error {
	for _, f := range slices.Backward(c.Files) {
		if _, err := w.restore(f.Path, f.Before); err != nil {
			return err
		}
	}
	for _, f := range c.Files {
		w.removeEmpty(f.MadeDirs)
	}
	return nil
}
