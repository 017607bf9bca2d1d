package workspace

import (
	"context"
	"fmt"
	"iter"
	"slices"
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
	return w.rollback(ctx, []*Change{c}, []int{id}, by)
}

// RollbackRun undoes every standing change the run made, newest first, as
// one change: each file the run touched gets back what it held before
// the run's first change to it. It refuses when another run changed one
// of those files since.
func (w *Workspace) RollbackRun(ctx context.Context, runID string) (Change, error) {
	if runID == "" {
		return Change{}, fmt.Errorf("workspace: RollbackRun needs a run id")
	}
	unlock, err := w.acquire()
	if err != nil {
		return Change{}, err
	}
	defer unlock()
	by := w.state.undoneBy()
	var live []*Change
	var ids []int
	for _, c := range w.state.changes {
		if c.RunID != runID || c.State != Done {
			continue
		}
		// Changes of the run that are undone already are listed too: the
		// run's own rollbacks stop standing, and what they undid must stay
		// undone.
		ids = append(ids, c.ID)
		if by[c.ID] == 0 {
			live = append(live, c)
		}
	}
	if len(live) == 0 {
		return Change{}, fmt.Errorf("%w: run %q has no standing changes", ErrNoChange, runID)
	}
	return w.rollback(ctx, live, ids, by)
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
			return w.rollback(ctx, []*Change{c}, []int{c.ID}, by)
		}
	}
	return Change{}, fmt.Errorf("%w: the journal has no standing change", ErrNoChange)
}

// plan is what a rollback does to one file.
type plan struct {
	path     string
	target   string // the hash the file gets back
	expect   string // the hash the file should hold now
	unknown  bool   // expect is unknown (a module's change)
	last     int    // the newest change of the set that touched the file
	madeDirs []string
}

// rollback undoes set (standing changes, oldest first) as one change
// listing undoes. The caller holds the lock.
func (w *Workspace) rollback(ctx context.Context, set []*Change, undoes []int, by []int) (Change, error) {
	var plans []*plan
	idx := map[string]*plan{}
	for _, c := range set {
		for _, f := range c.Files {
			p := idx[f.Path]
			if p == nil {
				p = &plan{path: f.Path, target: f.Before}
				idx[f.Path] = p
				plans = append(plans, p)
			}
			p.expect, p.unknown, p.last = f.After, f.AfterUnknown, c.ID
			p.madeDirs = append(p.madeDirs, f.MadeDirs...)
		}
	}
	inSet := map[int]bool{}
	for _, c := range set {
		inSet[c.ID] = true
	}
	first := set[0].ID
	files := make([]FileChange, 0, len(plans))
	befores := make([][]byte, 0, len(plans))
	for _, p := range plans {
		data, h, err := w.current(p.path)
		if err != nil {
			return Change{}, &PathError{Op: "rollback", Path: p.path, Err: err}
		}
		later, lh := w.laterChange(p.path, p.last, inSet, by)
		switch {
		case p.unknown && later != 0:
			return Change{}, &ConflictError{Change: first, Path: p.path, Later: later}
		case !p.unknown && h != p.expect:
			if lh != h {
				later = 0 // the file holds what no change wrote
			}
			return Change{}, &ConflictError{Change: first, Path: p.path, Later: later}
		}
		if p.target != "" {
			if _, err := w.getBlob(p.target); err != nil {
				return Change{}, err
			}
		}
		fc := FileChange{Path: p.path, Before: h, After: p.target}
		if p.target != "" {
			fc.MadeDirs = w.missingDirs(p.path)
		}
		files = append(files, fc)
		befores = append(befores, data)
	}
	ch := w.newChange(ctx, OpRollback, files)
	ch.Undoes = undoes
	if ch.Reason == "" {
		ch.Reason = fmt.Sprintf("roll back %s", idList(undoes))
	}
	err := w.commit(ch, befores, func() error {
		for _, p := range plans {
			if _, err := w.restore(p.path, p.target); err != nil {
				return err
			}
			if p.target == "" {
				w.removeEmpty(p.madeDirs)
			}
		}
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

// laterChange is the newest standing change after id, outside inSet,
// that touched the file at p, and the hash it left there; 0 for none.
func (w *Workspace) laterChange(p string, id int, inSet map[int]bool, by []int) (int, string) {
	for _, c := range slices.Backward(w.state.changes[id:]) {
		if inSet[c.ID] || c.State != Done || by[c.ID] != 0 {
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

func idList(ids []int) string {
	if len(ids) == 1 {
		return fmt.Sprintf("change %d", ids[0])
	}
	if len(ids) <= 5 {
		return fmt.Sprintf("changes %v", ids)
	}
	return fmt.Sprintf("%d changes (%d to %d)", len(ids), ids[0], ids[len(ids)-1])
}
