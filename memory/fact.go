package memory

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/autoagent-go/autoagent/llm"
)

// FactsMarker starts the system message in which a [Fact] memory shows the
// current facts to the model. Such messages found in a transcript (a
// persisted history) are dropped and replaced by a fresh one.
const FactsMarker = "[Remembered facts]"

// Defaults of [FactOptions].
const (
	DefaultMaxContextFacts       = 20
	DefaultMaxFacts              = 500
	DefaultExtractMaxTokens      = 800
	DefaultMaxConsolidationFacts = 30
	DefaultEmbedBatch            = 64
)

// EmbedFunc returns one embedding vector per text, in order. It is called
// with batches of fact texts and with single queries. All vectors must have
// the same length.
type EmbedFunc func(ctx context.Context, texts []string) ([][]float32, error)

// RecallMode selects how a [Fact] memory ranks facts for a query.
type RecallMode string

// The recall modes.
const (
	// RecallHybrid fuses the lexical (BM25) and the embedding (cosine)
	// rankings by Reciprocal Rank Fusion. It is the default, and is
	// lexical only when no EmbedFunc is set or embedding fails.
	RecallHybrid RecallMode = "hybrid"
	// RecallLexical ranks by BM25 only.
	RecallLexical RecallMode = "lexical"
	// RecallSemantic ranks by cosine similarity only, falling back to BM25
	// when embedding fails or finds nothing.
	RecallSemantic RecallMode = "semantic"
)

// FactOptions configures a [Fact] memory. The zero value of every field
// but Provider is a sensible default; without a Provider the memory still
// stores, recalls and forgets by id, but never extracts facts from
// conversations (Compact only injects the facts) and cannot ForgetMatching.
type FactOptions struct {
	// Provider makes the extraction and forget calls.
	Provider llm.Provider
	// Model overrides the provider's model for those calls.
	Model string

	// Identity names whose facts these are. It is written in the store,
	// and opening a store written for another identity is an error
	// wrapping [ErrIdentityMismatch]: one store per person.
	Identity string
	// Store persists the facts. When nil, Path selects a JSON file store
	// (see [OpenJSONStore]); when Path is empty too, facts live in memory
	// only.
	Store FactStore
	// Path is the JSON store file used when Store is nil.
	Path string
	// QuarantineCorrupt is passed to the JSON store opened for Path.
	QuarantineCorrupt bool

	// MaxMessages, KeepRecent and MaxConversations are as in
	// [SummarizingOptions]: above MaxMessages not-yet-folded messages,
	// the older ones are turned into facts and dropped.
	MaxMessages      int
	KeepRecent       int
	MaxConversations int

	// MaxContextFacts is how many current facts Compact shows the model,
	// the most recently updated (default 20). Recall reaches the others.
	MaxContextFacts int
	// MaxFacts caps the store (default 500): beyond it, superseded facts
	// are evicted first, then the least recently updated. -1: no cap.
	MaxFacts int
	// ExtractMaxTokens caps the extraction answer (default 800).
	ExtractMaxTokens int
	// MaxConsolidationFacts is how many existing facts the extraction and
	// forget calls are shown at most (default 30): the ones sharing the
	// most words with the conversation or instruction.
	MaxConsolidationFacts int

	// Background makes Compact return at once: facts are extracted in a
	// goroutine and the messages are dropped only at a later Compact,
	// once their facts are stored. Call Flush to wait for it, and Close
	// when done with the memory.
	Background bool

	// Embed, when set, adds embedding similarity to Recall.
	Embed EmbedFunc
	// EmbedModel names the embedding model. Stored vectors computed with
	// another model name are discarded and recomputed.
	EmbedModel string
	// EmbedBatch bounds the texts per Embed call (default 64).
	EmbedBatch int
	// RecallMode is how Recall ranks (default RecallHybrid).
	RecallMode RecallMode

	// Now returns the current time (default time.Now); tests fix it.
	Now func() time.Time
	// Logger receives warnings (embedding failures, background errors).
	// Nil discards them.
	Logger *slog.Logger
}

// Fact is identity memory: it keeps short, atomic facts about a person
// (one store per identity), which survive conversations and are shown to
// the model in every new one.
//
// When a conversation grows past MaxMessages, Compact makes one model call
// that reads the older messages and the relevant existing facts and answers
// with JSON operations: add a fact, update one (the new version supersedes
// the old), or delete one (it became stale). Updates and deletes are
// bi-temporal: the old record is kept with its validity closed (InvalidAt,
// SupersededBy), so [Fact.History] can show how a fact changed while only
// current facts are ever shown, recalled or used. Every record keeps its
// provenance ([Source]). Compact returns the system messages, one system
// message starting with [FactsMarker] listing the most recently updated
// current facts, and the recent tail. If extraction fails, nothing is
// dropped: Compact returns an error wrapping [ErrExtractionFailed].
//
// Recall ranks current facts by BM25 (k1 1.5, b 0.75) over the fact and its
// subject, fused by Reciprocal Rank Fusion (k 60) with cosine similarity of
// embeddings when an [EmbedFunc] is set; any embedding failure falls back
// to lexical ranking. Recall never calls the chat model.
//
// Facts learnt from a conversation that had ingested external untrusted
// content are marked Tainted: they are framed as data wherever shown, and
// the facts message then carries the taint sentinel.
//
// Fact implements [Rememberer], [Forgetter] and [Flusher], and is safe for
// concurrent use.
type Fact struct {
	opts  FactOptions
	store FactStore
	log   *slog.Logger

	mu      sync.Mutex
	state   *FactState
	version uint64
	cov     *coverage
	pending *llm.Usage // usage of work done outside Compact, reported by the next Compact
	recall  recallIndex
	vecMu   sync.RWMutex // guards recall's vectors; held across embedding calls so facts are embedded once

	foldMu sync.Mutex // one fold at a time: concurrent compactions of one conversation fold once

	bg bgState
}

var (
	_ Memory     = (*Fact)(nil)
	_ Rememberer = (*Fact)(nil)
	_ Forgetter  = (*Fact)(nil)
	_ Flusher    = (*Fact)(nil)
)

// NewFact returns a Fact memory with its store loaded. It fails with an
// error wrapping [ErrInvalidOptions] for bad options, a
// *[CorruptStoreError] for an unreadable store file, and an error wrapping
// [ErrIdentityMismatch] for another identity's store.
func NewFact(ctx context.Context, opts FactOptions) (*Fact, error) {
	if err := foldDefaults(&opts.MaxMessages, &opts.KeepRecent, &opts.MaxConversations, "FactOptions"); err != nil {
		return nil, err
	}
	for _, d := range []struct {
		name string
		v    *int
		def  int
	}{
		{"MaxContextFacts", &opts.MaxContextFacts, DefaultMaxContextFacts},
		{"ExtractMaxTokens", &opts.ExtractMaxTokens, DefaultExtractMaxTokens},
		{"MaxConsolidationFacts", &opts.MaxConsolidationFacts, DefaultMaxConsolidationFacts},
		{"EmbedBatch", &opts.EmbedBatch, DefaultEmbedBatch},
	} {
		if *d.v < 0 {
			return nil, invalidf("FactOptions.%s is %d; want a positive number (or 0 for %d)", d.name, *d.v, d.def)
		}
		if *d.v == 0 {
			*d.v = d.def
		}
	}
	switch {
	case opts.MaxFacts < -1:
		return nil, invalidf("FactOptions.MaxFacts is %d; want -1 (no cap), 0 (default %d) or a positive cap", opts.MaxFacts, DefaultMaxFacts)
	case opts.MaxFacts == 0:
		opts.MaxFacts = DefaultMaxFacts
	}
	switch opts.RecallMode {
	case "":
		opts.RecallMode = RecallHybrid
	case RecallHybrid, RecallLexical, RecallSemantic:
	default:
		return nil, invalidf("FactOptions.RecallMode is %q; want %q, %q or %q", opts.RecallMode, RecallHybrid, RecallLexical, RecallSemantic)
	}
	if opts.Store != nil && opts.Path != "" {
		return nil, invalidf("FactOptions has both Store and Path; set one")
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	store := opts.Store
	switch {
	case store != nil:
	case opts.Path != "":
		js, err := OpenJSONStore(opts.Path, JSONStoreOptions{QuarantineCorrupt: opts.QuarantineCorrupt, Logger: log})
		if err != nil {
			return nil, err
		}
		store = js
	default:
		store = NewMemoryStore()
	}
	st, err := store.Load(ctx)
	if err != nil {
		return nil, err
	}
	if opts.Identity != "" && st.Identity != "" && st.Identity != opts.Identity {
		return nil, fmt.Errorf("%w: the store holds facts about %q, this memory is for %q", ErrIdentityMismatch, st.Identity, opts.Identity)
	}
	f := &Fact{
		opts:   opts,
		store:  store,
		log:    log,
		state:  st,
		cov:    newCoverage(opts.MaxConversations),
		recall: newRecallIndex(),
	}
	f.bg.init()
	return f, nil
}

// Compact shows the current facts and, when the conversation is long,
// turns its older messages into facts; see [Fact].
func (f *Fact) Compact(ctx context.Context, msgs []llm.Message) ([]llm.Message, *llm.Usage, error) {
	t := newTranscript(msgs, isFactsMessage)
	h := t.chain([32]byte{})
	covered, tainted := f.coverageOf(h)
	tainted = tainted || t.ownTainted() || TaintedContext(ctx)

	usage := f.takePending()
	j := -1
	if f.opts.Provider != nil && t.len()-covered > f.opts.MaxMessages {
		j = t.foldPoint(covered, f.opts.KeepRecent)
	}
	if j < 0 {
		return t.tail(covered, f.factsMessage(tainted)...), usage, nil
	}
	if f.opts.Background && f.startBackground(ctx, t, h, covered, j, tainted) {
		return t.tail(covered, f.factsMessage(tainted)...), usage, nil
	}

	f.foldMu.Lock()
	defer f.foldMu.Unlock()
	// Another compaction of the same conversation may have folded while
	// this one waited.
	if c2, t2 := f.coverageOf(h); c2 > covered {
		covered, tainted = c2, tainted || t2
		if t.len()-covered <= f.opts.MaxMessages {
			return t.tail(covered, f.factsMessage(tainted)...), usage, nil
		}
		if j = t.foldPoint(covered, f.opts.KeepRecent); j < 0 {
			return t.tail(covered, f.factsMessage(tainted)...), usage, nil
		}
	}
	foldTainted := tainted || t.anyTainted(covered, j)
	u, err := f.fold(ctx, t.slice(covered, j), foldTainted)
	usage = addUsage(usage, u)
	if err != nil {
		return nil, usage, err
	}
	f.mu.Lock()
	f.cov.store(&coverEntry{key: h[j], n: j, tainted: foldTainted})
	f.mu.Unlock()
	return t.tail(j, f.factsMessage(foldTainted)...), usage, nil
}

// coverageOf returns how much of the conversation with prefix hashes h has
// been folded, and whether the folded part was tainted.
func (f *Fact) coverageOf(h [][32]byte) (int, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if e := f.cov.lookup(h); e != nil {
		return e.n, e.tainted
	}
	return 0, false
}

// takePending returns and clears the usage of work done outside Compact.
func (f *Fact) takePending() *llm.Usage {
	f.mu.Lock()
	defer f.mu.Unlock()
	u := f.pending
	f.pending = nil
	return u
}

func (f *Fact) addPending(u *llm.Usage) {
	if u == nil {
		return
	}
	f.mu.Lock()
	f.pending = addUsage(f.pending, u)
	f.mu.Unlock()
}

// slice returns the conversation messages [from, to).
func (t *transcript) slice(from, to int) []llm.Message {
	out := make([]llm.Message, 0, to-from)
	for k := from; k < to; k++ {
		out = append(out, t.at(k))
	}
	return out
}

// isFactsMessage reports a facts message of a Fact memory.
func isFactsMessage(m llm.Message) bool {
	return m.Role == llm.RoleSystem && strings.HasPrefix(m.Text(), FactsMarker)
}

// factsMessage renders the facts shown at the start of a conversation: the
// MaxContextFacts most recently updated current facts, in id order. Facts
// learnt from untrusted content are framed as data, and the message
// carries the taint sentinel when any is shown or the conversation itself
// was tainted.
func (f *Fact) factsMessage(tainted bool) []llm.Message {
	f.mu.Lock()
	cur := f.state.current()
	f.mu.Unlock()
	if len(cur) > f.opts.MaxContextFacts {
		recent := sortedByUpdated(cur)[:f.opts.MaxContextFacts]
		cur = sortedByID(recent)
	}
	var trusted, untrusted strings.Builder
	for _, r := range cur {
		w := &trusted
		if r.Tainted {
			w, tainted = &untrusted, true
		}
		w.WriteString("- ")
		w.WriteString(r.Text)
		if r.Subject != "" {
			w.WriteString(" (" + r.Subject + ")")
		}
		w.WriteByte('\n')
	}
	if len(cur) == 0 && !tainted {
		return nil
	}
	var b strings.Builder
	b.WriteString(FactsMarker)
	b.WriteByte('\n')
	if tainted {
		b.WriteString(taintSentinel)
		b.WriteByte('\n')
	}
	b.WriteString(trusted.String())
	if untrusted.Len() > 0 {
		b.WriteString(frameUntrusted(strings.TrimRight(untrusted.String(), "\n")))
	}
	return []llm.Message{llm.SystemText(strings.TrimRight(b.String(), "\n"))}
}

// Facts returns copies of the current facts in id order, or of every
// record, superseded and stale ones included, when includeInvalid is set.
func (f *Fact) Facts(includeInvalid bool) []Record {
	f.mu.Lock()
	defer f.mu.Unlock()
	if includeInvalid {
		return append([]Record(nil), f.state.Facts...)
	}
	return f.state.current()
}

// FactsAt returns the facts that were valid at t, in id order: what the
// memory believed then (as far as records were not erased since).
func (f *Fact) FactsAt(t time.Time) []Record {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []Record
	for _, r := range f.state.Facts {
		if r.ValidAt(t) {
			out = append(out, r)
		}
	}
	return out
}

// History returns every version of the fact id, oldest first, whichever
// version id names; nil for an unknown id.
func (f *Fact) History(id int64) []Record {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.state.history(id)
}

// Reload re-reads the store, for stores another process writes to.
func (f *Fact) Reload(ctx context.Context) error {
	st, err := f.store.Load(ctx)
	if err != nil {
		return err
	}
	f.setState(st)
	return nil
}

// setState installs a state returned by the store.
func (f *Fact) setState(st *FactState) {
	f.mu.Lock()
	f.state = st
	f.version++
	f.mu.Unlock()
}

// update applies fn through the store and installs the result. Callers
// must not hold f.mu.
func (f *Fact) update(ctx context.Context, fn func(*FactState) error) error {
	st, err := f.store.Update(ctx, func(s *FactState) error {
		if f.opts.Identity != "" {
			if s.Identity != "" && s.Identity != f.opts.Identity {
				return fmt.Errorf("%w: the store holds facts about %q, this memory is for %q", ErrIdentityMismatch, s.Identity, f.opts.Identity)
			}
			s.Identity = f.opts.Identity
		}
		return fn(s)
	})
	if err != nil {
		return err
	}
	f.setState(st)
	return nil
}

// Remember implements [Rememberer]. An empty source means [SourceHost].
// Under a context marked with [WithTaint] the fact is stored Tainted; a
// fact already stored keeps its taint, and takes that of a tainted
// caller saying it again.
func (f *Fact) Remember(ctx context.Context, text, subject string, source Source) (Record, error) {
	text, subject = strings.TrimSpace(text), strings.TrimSpace(subject)
	if text == "" {
		return Record{}, ErrEmptyFact
	}
	if source == "" {
		source = SourceHost
	}
	if !source.Valid() {
		return Record{}, fmt.Errorf("memory: unknown fact source %q; want %q, %q or %q", source, SourceUser, SourceAgent, SourceHost)
	}
	var out Record
	now := f.opts.Now().UTC()
	tainted := TaintedContext(ctx)
	err := f.update(ctx, func(s *FactState) error {
		if i := s.findCurrent(text); i >= 0 {
			s.Facts[i].Updated = now
			s.Facts[i].Tainted = s.Facts[i].Tainted || tainted
			if subject != "" && s.Facts[i].Subject == "" {
				s.Facts[i].Subject = subject
			}
			out = s.Facts[i]
			return nil
		}
		out = s.add(text, subject, source, tainted, now)
		s.evict(f.opts.MaxFacts)
		return nil
	})
	if err != nil {
		return Record{}, err
	}
	return out, nil
}

// Forget implements [Forgetter]: it erases the record id (only that
// version) and its embedding vector.
func (f *Fact) Forget(ctx context.Context, id int64) (bool, error) {
	var found bool
	err := f.update(ctx, func(s *FactState) error {
		found = len(s.erase(map[int64]bool{id: true})) > 0
		return nil
	})
	if err != nil || !found {
		return false, err
	}
	return true, f.purgeVectors(ctx)
}

// Close stops background consolidation: the running job is cancelled
// (its messages stay unfolded, so nothing is lost; call Flush first to let
// it finish) and waited for. Afterwards Compact folds in the foreground.
// Close is idempotent and never fails.
func (f *Fact) Close() error {
	return f.bg.close()
}
