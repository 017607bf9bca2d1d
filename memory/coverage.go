package memory

import "container/list"

// DefaultMaxConversations bounds how many conversations a [Summarizing] or
// [Fact] memory tracks at once when none is set.
const DefaultMaxConversations = 256

// coverage remembers, per conversation, how far it has been folded. A
// conversation is identified by the fingerprint of its folded prefix, so
// the full transcript of a known conversation resumes where it stopped, a
// different transcript starts from scratch, and several conversations can
// share one memory. Least recently used entries are evicted beyond max.
// Not safe for concurrent use: the owner locks.
type coverage struct {
	max   int
	byKey map[[32]byte]*list.Element
	lru   *list.List // of *coverEntry, most recent first
}

// coverEntry is the state of one conversation after a fold.
type coverEntry struct {
	key [32]byte
	// n is the number of conversation messages folded.
	n int
	// summary is the running summary (Summarizing only).
	summary string
	// tainted reports that folded messages held external content.
	tainted bool
}

func newCoverage(max int) *coverage {
	return &coverage{max: max, byKey: make(map[[32]byte]*list.Element), lru: list.New()}
}

// lookup returns the entry for the longest folded prefix of the transcript
// whose prefix fingerprints are h, or nil.
func (c *coverage) lookup(h [][32]byte) *coverEntry {
	for i := len(h) - 1; i >= 1; i-- {
		if el, ok := c.byKey[h[i]]; ok {
			e := el.Value.(*coverEntry)
			if e.n == i {
				c.lru.MoveToFront(el)
				return e
			}
		}
	}
	return nil
}

// store records e. Entries for shorter prefixes of the same conversation
// stay (until evicted), so a host that resumes from an older checkpoint of
// the transcript still finds its fold.
func (c *coverage) store(e *coverEntry) {
	if el, ok := c.byKey[e.key]; ok {
		el.Value = e
		c.lru.MoveToFront(el)
		return
	}
	c.byKey[e.key] = c.lru.PushFront(e)
	for c.lru.Len() > c.max {
		old := c.lru.Back()
		c.lru.Remove(old)
		delete(c.byKey, old.Value.(*coverEntry).key)
	}
}
