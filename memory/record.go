package memory

import (
	"strings"
	"time"
)

// Source says who asserted a remembered fact.
type Source string

// The provenances of a fact.
const (
	// SourceUser: the person the agent talks with stated it.
	SourceUser Source = "user"
	// SourceAgent: the model decided to remember it (extraction, the
	// remember tool).
	SourceAgent Source = "agent"
	// SourceHost: the embedding program stored it directly.
	SourceHost Source = "host"
)

// Valid reports whether s is one of the known sources.
func (s Source) Valid() bool {
	return s == SourceUser || s == SourceAgent || s == SourceHost
}

// Record is one remembered fact, with its validity interval, provenance and
// place in the history of the fact it replaced.
//
// A fact is current while InvalidAt is zero. When new information
// contradicts it, the memory does not overwrite it: it records the new
// version as a new Record and closes the old one (InvalidAt set,
// SupersededBy pointing at the new id), so the history of a fact can be
// read back with [Fact.History].
type Record struct {
	// ID identifies the fact in its store; ids are never reused.
	ID int64 `json:"id"`
	// Text is the fact, one short self-contained sentence.
	Text string `json:"fact"`
	// Subject is who or what the fact is about ("user", "daughter", ...).
	Subject string `json:"subject,omitempty"`
	// Source is who asserted it.
	Source Source `json:"source"`
	// ValidFrom is when the fact became known to be true.
	ValidFrom time.Time `json:"valid_from"`
	// InvalidAt is when the fact stopped being true (contradicted or made
	// stale); zero while it is current.
	InvalidAt time.Time `json:"invalid_at,omitzero"`
	// SupersededBy is the id of the fact that replaced this one; 0 when
	// none did (current, or made stale without a replacement).
	SupersededBy int64 `json:"superseded_by,omitempty"`
	// Updated is when the store last wrote this record.
	Updated time.Time `json:"updated"`
	// Tainted marks a fact learnt from a conversation that had ingested
	// external untrusted content; such facts are framed as data wherever
	// they are shown to a model.
	Tainted bool `json:"tainted,omitempty"`
}

// Current reports whether the fact is still valid.
func (r Record) Current() bool { return r.InvalidAt.IsZero() }

// ValidAt reports whether the fact was valid at t.
func (r Record) ValidAt(t time.Time) bool {
	return !t.Before(r.ValidFrom) && (r.InvalidAt.IsZero() || t.Before(r.InvalidAt))
}

// sameText reports whether two fact texts say the same thing, ignoring
// case and surrounding space.
func sameText(a, b string) bool {
	return strings.EqualFold(strings.TrimSpace(a), strings.TrimSpace(b))
}
