package memory

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"time"
)

// FactStore persists the facts of one identity for a [Fact] memory.
//
// The JSON file store ([OpenJSONStore]) is the default; the interface is
// small so that other stores (SQLite, a remote service) can be plugged in.
// Implementations must be safe for concurrent use. A store shared by
// several processes must make Update atomic across them.
type FactStore interface {
	// Load returns a copy of the stored state; the caller owns it.
	Load(ctx context.Context) (*FactState, error)

	// Update applies fn to a private copy of the latest stored state and,
	// when fn returns nil, stores the result atomically and returns a copy
	// of it. When fn fails, or the state cannot be stored, nothing changes
	// and the error is returned.
	Update(ctx context.Context, fn func(*FactState) error) (*FactState, error)

	// LoadVectors returns the stored embedding vectors of facts, by fact
	// id, that were computed with model (an empty map when the stored
	// vectors were computed with another model, or there are none).
	LoadVectors(ctx context.Context, model string) (map[int64][]float32, error)

	// SaveVectors replaces the stored vectors with vectors, computed with
	// model. The map is not retained.
	SaveVectors(ctx context.Context, model string, vectors map[int64][]float32) error
}

// FactState is what a [FactStore] holds: the facts of one identity, in
// ascending id order, current and superseded.
type FactState struct {
	// Identity names whose facts these are ("" when not set).
	Identity string `json:"identity,omitempty"`
	// NextID is the id the next fact will get; ids are never reused.
	NextID int64 `json:"next_id"`
	// Facts are the records, sorted by ID.
	Facts []Record `json:"facts"`
}

// clone returns an independent copy (Records hold no pointers).
func (s *FactState) clone() *FactState {
	c := *s
	c.Facts = slices.Clone(s.Facts)
	return &c
}

// normalize sorts the facts and makes NextID larger than every id.
func (s *FactState) normalize() {
	slices.SortFunc(s.Facts, func(a, b Record) int { return cmp.Compare(a.ID, b.ID) })
	if s.NextID < 1 {
		s.NextID = 1
	}
	if n := len(s.Facts); n > 0 && s.Facts[n-1].ID >= s.NextID {
		s.NextID = s.Facts[n-1].ID + 1
	}
}

// index returns the position of id in Facts, or -1.
func (s *FactState) index(id int64) int {
	i, ok := slices.BinarySearchFunc(s.Facts, id, func(r Record, id int64) int { return cmp.Compare(r.ID, id) })
	if !ok {
		return -1
	}
	return i
}

// get returns the record with id.
func (s *FactState) get(id int64) (Record, bool) {
	if i := s.index(id); i >= 0 {
		return s.Facts[i], true
	}
	return Record{}, false
}

// current returns the facts still valid, in id order.
func (s *FactState) current() []Record {
	out := make([]Record, 0, len(s.Facts))
	for _, r := range s.Facts {
		if r.Current() {
			out = append(out, r)
		}
	}
	return out
}

// findCurrent returns the current fact saying text, if any.
func (s *FactState) findCurrent(text string) int {
	for i, r := range s.Facts {
		if r.Current() && sameText(r.Text, text) {
			return i
		}
	}
	return -1
}

// add appends a new current fact and returns it.
func (s *FactState) add(text, subject string, src Source, tainted bool, now time.Time) Record {
	r := Record{
		ID: s.NextID, Text: text, Subject: subject, Source: src,
		ValidFrom: now, Updated: now, Tainted: tainted,
	}
	s.NextID++
	s.Facts = append(s.Facts, r)
	return r
}

// supersede records text as the new version of the current fact id and
// closes the old one. The subject is inherited when empty, and so is the
// old version's taint: the new one was written from it. It reports false
// (and changes nothing) when id is not a current fact.
func (s *FactState) supersede(id int64, text, subject string, src Source, tainted bool, now time.Time) (Record, bool) {
	i := s.index(id)
	if i < 0 || !s.Facts[i].Current() {
		return Record{}, false
	}
	if subject == "" {
		subject = s.Facts[i].Subject
	}
	r := s.add(text, subject, src, tainted || s.Facts[i].Tainted, now)
	old := &s.Facts[i] // add may have grown the slice: index again
	old.InvalidAt, old.SupersededBy, old.Updated = now, r.ID, now
	return r, true
}

// retire closes the validity of the current fact id without a successor.
func (s *FactState) retire(id int64, now time.Time) bool {
	i := s.index(id)
	if i < 0 || !s.Facts[i].Current() {
		return false
	}
	s.Facts[i].InvalidAt, s.Facts[i].Updated = now, now
	return true
}

// erase hard-deletes the records with the given ids and returns them.
func (s *FactState) erase(ids map[int64]bool) []Record {
	var gone []Record
	s.Facts = slices.DeleteFunc(s.Facts, func(r Record) bool {
		if ids[r.ID] {
			gone = append(gone, r)
			return true
		}
		return false
	})
	return gone
}

// history returns the versions of the fact id, oldest first: back along
// the records that were superseded into it, then forward along
// SupersededBy. It tolerates erased links and never loops.
func (s *FactState) history(id int64) []Record {
	if s.index(id) < 0 {
		return nil
	}
	prev := make(map[int64]int64) // successor -> predecessor
	for _, r := range s.Facts {
		if r.SupersededBy != 0 {
			prev[r.SupersededBy] = r.ID
		}
	}
	seen := map[int64]bool{id: true}
	root := id
	for {
		p, ok := prev[root]
		if !ok || seen[p] || s.index(p) < 0 {
			break
		}
		seen[p] = true
		root = p
	}
	var out []Record
	visited := make(map[int64]bool)
	for cur := root; cur != 0 && !visited[cur]; {
		visited[cur] = true
		r, ok := s.get(cur)
		if !ok {
			break
		}
		out = append(out, r)
		cur = r.SupersededBy
	}
	return out
}

// predecessors returns the ids of the earlier versions of id.
func (s *FactState) predecessors(id int64) []int64 {
	var out []int64
	for _, r := range s.history(id) {
		if r.ID == id {
			break
		}
		out = append(out, r.ID)
	}
	return out
}

// evict hard-deletes records beyond max: superseded or stale ones first,
// then current ones, least recently updated first. It returns the ids.
func (s *FactState) evict(max int) []int64 {
	over := len(s.Facts) - max
	if max <= 0 || over <= 0 {
		return nil
	}
	order := slices.Clone(s.Facts)
	slices.SortStableFunc(order, func(a, b Record) int {
		if a.Current() != b.Current() {
			if a.Current() {
				return 1
			}
			return -1
		}
		if c := a.Updated.Compare(b.Updated); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	drop := make(map[int64]bool, over)
	ids := make([]int64, 0, over)
	for _, r := range order[:over] {
		drop[r.ID] = true
		ids = append(ids, r.ID)
	}
	s.erase(drop)
	return ids
}

// MemoryStore is a [FactStore] that keeps everything in process memory:
// nothing survives the process. It is what a [Fact] memory uses when given
// neither a Store nor a Path, and what tests use.
type MemoryStore struct {
	mu      sync.Mutex
	state   *FactState
	model   string
	vectors map[int64][]float32
}

var _ FactStore = (*MemoryStore)(nil)

// NewMemoryStore returns an empty in-memory store.
func NewMemoryStore() *MemoryStore {
	return &MemoryStore{state: &FactState{NextID: 1}}
}

// Load implements [FactStore].
func (m *MemoryStore) Load(ctx context.Context) (*FactState, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.state.clone(), nil
}

// Update implements [FactStore].
func (m *MemoryStore) Update(ctx context.Context, fn func(*FactState) error) (*FactState, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	next := m.state.clone()
	if err := fn(next); err != nil {
		return nil, err
	}
	next.normalize()
	m.state = next
	return next.clone(), nil
}

// LoadVectors implements [FactStore].
func (m *MemoryStore) LoadVectors(ctx context.Context, model string) (map[int64][]float32, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[int64][]float32)
	if model != m.model {
		return out, nil
	}
	for id, v := range m.vectors {
		out[id] = slices.Clone(v)
	}
	return out, nil
}

// SaveVectors implements [FactStore].
func (m *MemoryStore) SaveVectors(ctx context.Context, model string, vectors map[int64][]float32) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.model = model
	m.vectors = make(map[int64][]float32, len(vectors))
	for id, v := range vectors {
		m.vectors[id] = slices.Clone(v)
	}
	return nil
}
