package memory

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/autoagent-go/autoagent/internal/rank"
	"github.com/autoagent-go/autoagent/llm"
)

// recallIndex is the Fact memory's search state: a BM25 index over the
// current facts, kept in step with the store incrementally, and the
// embedding vectors when an EmbedFunc is set.
type recallIndex struct {
	version uint64 // state version the BM25 index reflects
	bm25    *bm25Index

	vloaded  bool
	vversion uint64 // state version the vectors were pruned against
	vectors  map[int64][]float32
	norms    map[int64]float64
	dense    *denseVectors // flat copy for scanning; nil when stale
}

// denseVectors lays the vectors of one dimension out contiguously, so a
// query scans memory linearly instead of walking a map.
type denseVectors struct {
	dim   int
	ids   []int64
	norms []float64
	data  []float32
}

func buildDense(vectors map[int64][]float32, norms map[int64]float64, dim int) *denseVectors {
	d := &denseVectors{dim: dim}
	for id, v := range vectors {
		if len(v) != dim || norms[id] == 0 {
			continue
		}
		d.ids = append(d.ids, id)
		d.norms = append(d.norms, norms[id])
		d.data = append(d.data, v...)
	}
	return d
}

func newRecallIndex() recallIndex {
	return recallIndex{bm25: newBM25Index(), vectors: make(map[int64][]float32), norms: make(map[int64]float64)}
}

// syncIndex brings the BM25 index in line with the current facts. Callers
// hold f.mu.
func (f *Fact) syncIndex() {
	x := &f.recall
	if x.version == f.version && x.bm25.len() > 0 {
		return
	}
	live := make(map[int64]bool, len(f.state.Facts))
	for _, r := range f.state.Facts {
		if !r.Current() {
			continue
		}
		live[r.ID] = true
		if !x.bm25.has(r.ID) {
			x.bm25.add(r.ID, r.Text+" "+r.Subject)
		}
	}
	for _, id := range x.bm25.ids() {
		if !live[id] {
			x.bm25.remove(id)
		}
	}
	x.version = f.version
}

// Recall returns up to k current facts relevant to query, most relevant
// first, as user messages "[Fact #ID] text (subject)"; facts learnt from
// untrusted content are framed as data. It never calls the chat model; it
// calls the EmbedFunc, when set, for the query and for facts not embedded
// yet.
func (f *Fact) Recall(ctx context.Context, query string, k int) ([]llm.Message, error) {
	rs, err := f.RecallFacts(ctx, query, k)
	if err != nil {
		return nil, err
	}
	out := make([]llm.Message, len(rs))
	for i, r := range rs {
		out[i] = llm.UserText(recallLine(r))
	}
	return out, nil
}

// recallLine renders a recalled fact.
func recallLine(r Record) string {
	text := r.Text
	if r.Subject != "" {
		text += " (" + r.Subject + ")"
	}
	if r.Tainted {
		text = frameUntrusted(text)
	}
	return "[Fact #" + strconv.FormatInt(r.ID, 10) + "] " + text
}

// RecallFacts is [Fact.Recall] returning the records themselves.
func (f *Fact) RecallFacts(ctx context.Context, query string, k int) ([]Record, error) {
	if k <= 0 {
		return nil, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	hybrid := f.opts.Embed != nil && f.opts.RecallMode != RecallLexical
	f.mu.Lock()
	f.syncIndex()
	list := f.recall.bm25.scoreList(query)
	depth := k
	if hybrid {
		depth = rankWindow(k)
	}
	lexical := rankList(list, depth)
	f.mu.Unlock()

	order := lexical
	if hybrid {
		semantic, err := f.semanticRanking(ctx, query, rankWindow(k))
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			f.log.Warn("memory: embedding failed; recall is lexical only", "error", err)
		}
		switch {
		case err != nil:
		case f.opts.RecallMode == RecallSemantic:
			if len(semantic) > 0 {
				order = semantic
			}
		default:
			order = rank.FuseRRF(lexical, semantic)
		}
	}

	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]Record, 0, min(k, len(order)))
	for _, id := range order {
		if len(out) == k {
			break
		}
		if r, ok := f.state.get(id); ok && r.Current() {
			out = append(out, r)
		}
	}
	return out, nil
}

// semanticRanking ranks current facts by cosine similarity to query,
// embedding the facts that have no vector yet (and storing the vectors).
func (f *Fact) semanticRanking(ctx context.Context, query string, depth int) ([]int64, error) {
	if err := f.embedMissing(ctx); err != nil {
		return nil, err
	}
	qv, err := f.embed(ctx, []string{query})
	if err != nil {
		return nil, err
	}
	q := qv[0]
	qn := norm(q)
	if qn == 0 {
		return nil, nil
	}
	f.vecMu.Lock()
	x := &f.recall
	if x.dense == nil || x.dense.dim != len(q) {
		x.dense = buildDense(x.vectors, x.norms, len(q))
	}
	d := x.dense
	f.vecMu.Unlock()
	top := newTopK(depth)
	for i, id := range d.ids {
		v := d.data[i*d.dim : (i+1)*d.dim]
		var dot float32
		for j, a := range v {
			dot += a * q[j]
		}
		if c := float64(dot) / (d.norms[i] * qn); c > 0 {
			top.push(scored{id, c})
		}
	}
	return top.ranked(), nil
}

// embedMissing loads the stored vectors once, drops those of facts no
// longer current, and embeds the current facts that have none.
func (f *Fact) embedMissing(ctx context.Context) error {
	f.vecMu.Lock()
	defer f.vecMu.Unlock()
	x := &f.recall
	changed := false
	if err := f.loadVectorsLocked(ctx); err != nil {
		return err
	}
	f.mu.Lock()
	version := f.version
	var ids []int64
	var texts []string
	if x.vversion != version || len(x.vectors) == 0 {
		live := make(map[int64]bool)
		for _, r := range f.state.Facts {
			if !r.Current() {
				continue
			}
			live[r.ID] = true
			if _, ok := x.vectors[r.ID]; !ok {
				ids = append(ids, r.ID)
				texts = append(texts, r.Text)
			}
		}
		for id := range x.vectors {
			if !live[id] {
				delete(x.vectors, id)
				delete(x.norms, id)
				changed = true
			}
		}
	}
	f.mu.Unlock()

	for start := 0; start < len(texts); start += f.opts.EmbedBatch {
		end := min(start+f.opts.EmbedBatch, len(texts))
		vs, err := f.embed(ctx, texts[start:end])
		if err != nil {
			if changed || start > 0 {
				x.dense = nil
				f.saveVectorsLocked(ctx)
			}
			return err
		}
		for i, v := range vs {
			x.vectors[ids[start+i]], x.norms[ids[start+i]] = v, norm(v)
		}
		changed = true
	}
	x.vversion = version
	if changed {
		x.dense = nil
		f.saveVectorsLocked(ctx)
	}
	return nil
}

// loadVectorsLocked loads the stored vectors once. Vectors are derived
// data: a corrupt sidecar is logged and replaced at the next save rather
// than blocking recall or forgetting. Callers hold f.vecMu.
func (f *Fact) loadVectorsLocked(ctx context.Context) error {
	x := &f.recall
	if x.vloaded {
		return nil
	}
	vs, err := f.store.LoadVectors(ctx, f.opts.EmbedModel)
	var corrupt *CorruptStoreError
	switch {
	case errors.As(err, &corrupt):
		f.log.Warn("memory: embedding vectors unreadable; they will be recomputed", "error", err)
		vs = nil
	case err != nil:
		return err
	}
	for id, v := range vs {
		x.vectors[id], x.norms[id] = v, norm(v)
	}
	x.vloaded = true
	return nil
}

// embed calls the EmbedFunc and checks its answer.
func (f *Fact) embed(ctx context.Context, texts []string) ([][]float32, error) {
	vs, err := f.opts.Embed(ctx, texts)
	if err != nil {
		return nil, err
	}
	if len(vs) != len(texts) {
		return nil, fmt.Errorf("memory: embed function returned %d vectors for %d texts", len(vs), len(texts))
	}
	for i, v := range vs {
		if len(v) == 0 {
			return nil, fmt.Errorf("memory: embed function returned an empty vector for text %d", i)
		}
	}
	return vs, nil
}

// saveVectorsLocked persists the vectors; a failure only costs
// recomputation later, so it is logged. Callers hold f.vecMu.
func (f *Fact) saveVectorsLocked(ctx context.Context) {
	if err := f.store.SaveVectors(ctx, f.opts.EmbedModel, f.recall.vectors); err != nil {
		f.log.Warn("memory: saving embedding vectors failed", "error", err)
	}
}

// purgeVectors removes the stored vectors of erased facts: a vector can
// leak what its fact said, so forgetting a fact forgets its vector too.
func (f *Fact) purgeVectors(ctx context.Context) error {
	f.vecMu.Lock()
	defer f.vecMu.Unlock()
	x := &f.recall
	if err := f.loadVectorsLocked(ctx); err != nil {
		return err
	}
	f.mu.Lock()
	for id := range x.vectors {
		if f.state.index(id) < 0 {
			delete(x.vectors, id)
			delete(x.norms, id)
		}
	}
	f.mu.Unlock()
	x.dense = nil
	return f.store.SaveVectors(ctx, f.opts.EmbedModel, x.vectors)
}

func norm(v []float32) float64 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	return math.Sqrt(s)
}
