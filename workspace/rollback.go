package workspace

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"strings"
)

// undoneBy returns, for each change id, the standing rollback that undid
// it, 0 for none. A rollback stands when it is done and not undone
// itself; a change is undone when any standing rollback lists it. Each
// rollback only lists earlier changes, so one pass from the newest
// settles every one.
func (s *journalState) undoneBy() []int {
	by := make([]int, len(s.changes)+1)
	for _, c := range slices.Backward(s.changes) {
		if c.State != Done || by[c.ID] != 0 || c.Op != OpRollback {
			continue
		}
		for _, u := range c.Undoes {
			if u > 0 && u < c.ID && by[u] == 0 {
				by[u] = c.ID
			}
		}
	}
	return by
}

// Filter selects changes; its zero value selects every one.
type Filter struct {
	RunID string // changes made in this run
	Path  string // changes that touched this file
	ID    int    // this change
}

func (f Filter) match(c *Change, p string) bool {
	if f.RunID != "" && c.RunID != f.RunID || f.ID != 0 && c.ID != f.ID {
		return false
	}
	return p == "" || slices.ContainsFunc(c.Files, func(fc FileChange) bool { return fc.Path == p })
}

// Changes yields the journal's changes matching f, oldest first, each with
// RolledBackBy filled in. It reads the journal once, when iteration
// starts; a failure to read it is yielded as the only error.
func (w *Workspace) Changes(f Filter) iter.Seq2[Change, error] {
	return func(yield func(Change, error) bool) {
		p := ""
		if f.Path != "" {
			c, err := cleanPath(f.Path)
			if err != nil {
				yield(Change{}, &PathError{Op: "changes", Path: f.Path, Err: err})
				return
			}
			p = c
		}
		unlock, err := w.acquire()
		if err != nil {
			yield(Change{}, err)
			return
		}
		by := w.state.undoneBy()
		var out []Change
		for _, c := range w.state.changes {
			if f.match(c, p) {
				out = append(out, snapshot(c, by))
			}
		}
		unlock()
		for _, c := range out {
			if !yield(c, nil) {
				return
			}
		}
	}
}

// Change returns the change with the given id.
func (w *Workspace) Change(id int) (Change, error) {
	unlock, err := w.acquire()
	if err != nil {
		return Change{}, err
	}
	defer unlock()
	c, err := w.state.get(id)
	if err != nil {
		return Change{}, err
	}
	return snapshot(c, w.state.undoneBy()), nil
}

func (s *journalState) get(id int) (*Change, error) {
	if id < 1 || id > len(s.changes) {
		return nil, fmt.Errorf("workspace: no change %d (the journal holds changes 1 to %d)", id, len(s.changes))
	}
	return s.changes[id-1], nil
}

// snapshot copies c for a caller, with RolledBackBy.
func snapshot(c *Change, by []int) Change {
	s := *c
	s.Files = slices.Clone(c.Files)
	s.Undoes = slices.Clone(c.Undoes)
	s.RolledBackBy = by[c.ID]
	return s
}

// Rollback undoes the change id: each of its files gets its before-image
// back. It refuses when a file was changed since (by a later change, or
// outside the workspace), as that work would be lost: roll back the later
// changes first, or the whole run. The rollback is a change itself, and
// rolling it back redoes id.
func (w *Workspace) Rollback(ctx context.Context, id int) (Change, error) {
	unlock, err := w.acquire()
	if err != nil {
		return Change{}, err
	}
	defer unlock()
	c, err := w.state.get(id)
	if err != nil {
		return Change{}, err
	}
	by := w.state.undoneBy()
	switch {
	case c.State != Done:
		return Change{}, fmt.Errorf("workspace: change %d did not take effect (%s): there is nothing to roll back", id, c.State)
	case by[id] != 0:
		return Change{}, fmt.Errorf("workspace: change %d is already rolled back by change %d (roll back change %d to redo it)", id, by[id], by[id])
	}
	s := w.newSim()
	if err := s.undo(c, by); err != nil {
		return Change{}, err
	}
	return w.commitSim(ctx, s)
}

// RollbackRun undoes every standing change the run made, newest first,
// as one change: each file the run touched gets back what it held before
// the run. A rollback the run made is undone too, so what it undid stands
// again. It refuses when a file was changed since by another run or
// outside the workspace.
func (w *Workspace) RollbackRun(ctx context.Context, runID string) (Change, error) {
	if runID == "" {
		return Change{}, fmt.Errorf("workspace: RollbackRun needs a run id")
	}
	unlock, err := w.acquire()
	if err != nil {
		return Change{}, err
	}
	defer unlock()
	s := w.newSim()
	for {
		by := s.undoneBy()
		var next *Change
		for _, c := range slices.Backward(s.changes[:len(s.changes)-1]) {
			if c.RunID == runID && c.State == Done && by[c.ID] == 0 {
				next = c
				break
			}
		}
		if next == nil {
			break
		}
		if err := s.undo(next, by); err != nil {
			return Change{}, err
		}
	}
	if len(s.virt.Undoes) == 0 {
		return Change{}, fmt.Errorf("%w: run %q has no standing changes", ErrNoChange, runID)
	}
	return w.commitSim(ctx, s)
}

// RollbackLast undoes the newest standing change that is not a rollback;
// called again, it undoes the one before. Rollback of the rollback it
// returns redoes the change.
func (w *Workspace) RollbackLast(ctx context.Context) (Change, error) {
	unlock, err := w.acquire()
	if err != nil {
		return Change{}, err
	}
	defer unlock()
	by := w.state.undoneBy()
	for _, c := range slices.Backward(w.state.changes) {
		if c.State == Done && by[c.ID] == 0 && c.Op != OpRollback {
			s := w.newSim()
			if err := s.undo(c, by); err != nil {
				return Change{}, err
			}
			return w.commitSim(ctx, s)
		}
	}
	return Change{}, fmt.Errorf("%w: the journal has no standing change", ErrNoChange)
}

// sim plays a rollback on the files' hashes before it touches them: each
// change undone in turn, checked against what the files hold by then, and
// the rollback being built standing as the newest change (virt), so a
// rollback undone makes what it undid stand again.
type sim struct {
	w       *Workspace
	changes []*Change // the journal's, then virt
	virt    *Change
	real    map[string]string // what the files hold now
	data    map[string][]byte
	cur     map[string]string // what they will hold
	order   []string
	made    map[string][]string
}

func (w *Workspace) newSim() *sim {
	v := &Change{ID: len(w.state.changes) + 1, Op: OpRollback, State: Done}
	return &sim{w: w, changes: append(slices.Clip(w.state.changes), v), virt: v,
		real: map[string]string{}, data: map[string][]byte{}, cur: map[string]string{}, made: map[string][]string{}}
}

func (s *sim) undoneBy() []int {
	st := journalState{changes: s.changes}
	return st.undoneBy()
}

// hash is what the file at p holds in the simulation.
func (s *sim) hash(p string) (string, error) {
	if h, ok := s.cur[p]; ok {
		return h, nil
	}
	data, h, err := s.w.current(p)
	if err != nil {
		return "", &PathError{Op: "rollback", Path: p, Err: err}
	}
	s.real[p], s.data[p], s.cur[p] = h, data, h
	s.order = append(s.order, p)
	return h, nil
}

// undo rolls c back in the simulation, or refuses: a file of c does not
// hold c's after-image (a later change or a hand changed it), or, for a
// module's change whose after-image is unknown, a later change touched it.
func (s *sim) undo(c *Change, by []int) error {
	for _, f := range c.Files {
		h, err := s.hash(f.Path)
		if err != nil {
			return err
		}
		later, lh := s.later(f.Path, c.ID, by, f.AfterUnknown)
		switch {
		case f.AfterUnknown && later != 0:
			return &ConflictError{Change: c.ID, Path: f.Path, Later: later}
		case !f.AfterUnknown && h != f.After:
			if lh != h {
				later = 0
			}
			return &ConflictError{Change: c.ID, Path: f.Path, Later: later}
		}
	}
	for _, f := range slices.Backward(c.Files) {
		if f.Before != "" {
			if _, err := s.w.getBlob(f.Before); err != nil {
				return err
			}
		}
		s.cur[f.Path] = f.Before
		s.made[f.Path] = append(s.made[f.Path], f.MadeDirs...)
	}
	s.virt.Undoes = append(s.virt.Undoes, c.ID)
	return nil
}

// later is the newest standing change after id that touched the file at
// p (not a rollback, when skipRollbacks), and the hash it left there; 0
// for none.
func (s *sim) later(p string, id int, by []int, skipRollbacks bool) (int, string) {
	for _, c := range slices.Backward(s.changes[id : len(s.changes)-1]) {
		if c.State != Done || by[c.ID] != 0 || skipRollbacks && c.Op == OpRollback {
			continue
		}
		for _, f := range c.Files {
			if f.Path == p {
				return c.ID, f.After
			}
		}
	}
	return 0, ""
}

// commitSim journals and applies the simulated rollback: each file whose
// content it changes gets it. The caller holds the lock.
func (w *Workspace) commitSim(ctx context.Context, s *sim) (Change, error) {
	var files []FileChange
	var befores [][]byte
	for _, p := range s.order {
		if s.cur[p] == s.real[p] {
			continue
		}
		fc := FileChange{Path: p, Before: s.real[p], After: s.cur[p]}
		if fc.After != "" {
			fc.MadeDirs = w.missingDirs(p)
		}
		files = append(files, fc)
		befores = append(befores, s.data[p])
	}
	ch := w.newChange(ctx, OpRollback, files)
	ch.Undoes = slices.Clone(s.virt.Undoes)
	slices.Sort(ch.Undoes)
	if ch.Reason == "" {
		ch.Reason = "roll back " + idList(ch.Undoes)
	}
	err := w.commit(ch, befores, func() error {
		for _, f := range files {
			if _, err := w.restore(f.Path, f.After); err != nil {
				return err
			}
		}
		// The directories the undone changes made for files now absent go
		// when empty, deepest first.
		var dirs []string
		for _, p := range s.order {
			if s.cur[p] == "" {
				dirs = append(dirs, s.made[p]...)
			}
		}
		slices.SortFunc(dirs, func(a, b string) int {
			if d := strings.Count(a, "/") - strings.Count(b, "/"); d != 0 {
				return d
			}
			return strings.Compare(a, b)
		})
		w.removeEmpty(slices.Compact(dirs))
		return nil
	})
	if err != nil {
		return Change{}, err
	}
	if n, err := w.count(); err == nil {
		w.total = n
	}
	return *ch, nil
}

func idList(ids []int) string {
	if len(ids) == 1 {
		return fmt.Sprintf("change %d", ids[0])
	}
	if len(ids) <= 5 {
		return fmt.Sprintf("changes %v", ids)
	}
	return fmt.Sprintf("%d changes (%d to %d)", len(ids), ids[0], ids[len(ids)-1])
}
