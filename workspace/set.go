package workspace

import (
	"errors"
	"path/filepath"
	"sync"
)

// Set opens workspaces by directory, each once, with the same options,
// and closes them together. It is what a host's journal opener needs
// (host.Options.Journal opens the journal of each fs.workspace grant's
// directory and never closes it):
//
//	set := workspace.NewSet(workspace.Options{Protected: ps})
//	defer set.Close()
//	opts.Journal = func(dir string) (host.Journal, error) { return set.Open(dir) }
type Set struct {
	opts   Options
	mu     sync.Mutex
	open   map[string]*Workspace
	closed bool
}

// NewSet returns a set opening workspaces with opts.
func NewSet(opts Options) *Set { return &Set{opts: opts, open: map[string]*Workspace{}} }

// Open returns the workspace rooted at dir, opening it on first use. It
// is safe for concurrent use.
func (s *Set) Open(dir string) (*Workspace, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	abs = filepath.Clean(abs)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrClosed
	}
	if w := s.open[abs]; w != nil {
		return w, nil
	}
	w, err := Open(abs, s.opts)
	if err != nil {
		return nil, err
	}
	s.open[abs] = w
	return w, nil
}

// Add makes w the set's workspace of its directory, so Open returns it
// (with its own options) instead of opening another; the set closes it.
// It fails when the set holds another workspace of that directory.
func (s *Set) Add(w *Workspace) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	if o := s.open[w.Dir()]; o != nil && o != w {
		return errors.New("workspace: the set holds another workspace of " + w.Dir())
	}
	s.open[w.Dir()] = w
	return nil
}

// Close closes every workspace the set opened; Open fails afterwards.
func (s *Set) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	var errs []error
	for _, w := range s.open {
		errs = append(errs, w.Close())
	}
	s.open = nil
	return errors.Join(errs...)
}
