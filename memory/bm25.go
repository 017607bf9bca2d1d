package memory

import (
	"math"
	"strings"
	"unicode"
)

// BM25 parameters: the usual defaults, which suit short documents such as
// one-sentence facts well.
const (
	bm25K1 = 1.5
	bm25B  = 0.75
)

// tokenize lower-cases s and splits it on anything that is not a letter
// or a digit (any script, accents kept), dropping one-rune tokens.
func tokenize(s string) []string {
	fields := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsNumber(r)
	})
	out := fields[:0]
	for _, f := range fields {
		if len([]rune(f)) >= 2 {
			out = append(out, f)
		}
	}
	return out
}

// bm25Index scores documents against a query with Okapi BM25. Documents
// are added and removed incrementally, so a store of many facts is never
// re-tokenised on a change. Documents live in dense slots so scoring
// accumulates into a reused slice instead of a map. Not safe for
// concurrent use.
type bm25Index struct {
	slotOf   map[int64]int32
	docs     []bm25Doc // by slot; id 0 marks a free slot
	free     []int32
	postings map[string][]posting
	totalLen int
	acc      []float64 // scratch accumulator, by slot
	touched  []int32
}

type bm25Doc struct {
	id     int64
	terms  []string // distinct terms, for removal
	length int
}

type posting struct {
	slot int32
	tf   int32
}

func newBM25Index() *bm25Index {
	return &bm25Index{slotOf: make(map[int64]int32), postings: make(map[string][]posting)}
}

func (x *bm25Index) len() int { return len(x.slotOf) }

func (x *bm25Index) has(id int64) bool { _, ok := x.slotOf[id]; return ok }

// ids returns the indexed ids.
func (x *bm25Index) ids() []int64 {
	out := make([]int64, 0, len(x.slotOf))
	for id := range x.slotOf {
		out = append(out, id)
	}
	return out
}

// add indexes text under id, replacing what id held before.
func (x *bm25Index) add(id int64, text string) {
	x.remove(id)
	toks := tokenize(text)
	tf := make(map[string]int32, len(toks))
	for _, t := range toks {
		tf[t]++
	}
	var slot int32
	if n := len(x.free); n > 0 {
		slot, x.free = x.free[n-1], x.free[:n-1]
	} else {
		slot = int32(len(x.docs))
		x.docs = append(x.docs, bm25Doc{})
		x.acc = append(x.acc, 0)
	}
	d := bm25Doc{id: id, terms: make([]string, 0, len(tf)), length: len(toks)}
	for t, n := range tf {
		d.terms = append(d.terms, t)
		x.postings[t] = append(x.postings[t], posting{slot: slot, tf: n})
	}
	x.docs[slot] = d
	x.slotOf[id] = slot
	x.totalLen += d.length
}

// remove drops id from the index.
func (x *bm25Index) remove(id int64) {
	slot, ok := x.slotOf[id]
	if !ok {
		return
	}
	d := x.docs[slot]
	for _, t := range d.terms {
		ps := x.postings[t]
		for i, p := range ps {
			if p.slot == slot {
				ps[i] = ps[len(ps)-1]
				ps = ps[:len(ps)-1]
				break
			}
		}
		if len(ps) == 0 {
			delete(x.postings, t)
		} else {
			x.postings[t] = ps
		}
	}
	x.totalLen -= d.length
	x.docs[slot] = bm25Doc{}
	x.free = append(x.free, slot)
	delete(x.slotOf, id)
}

// scoreList returns every document with a positive BM25 score for query,
// in no particular order. A query term counts once per occurrence.
func (x *bm25Index) scoreList(query string) []scored {
	n := float64(len(x.slotOf))
	if n == 0 {
		return nil
	}
	avg := float64(x.totalLen) / n
	if avg == 0 {
		avg = 1
	}
	qtf := make(map[string]int)
	for _, t := range tokenize(query) {
		qtf[t]++
	}
	x.touched = x.touched[:0]
	for t, qc := range qtf {
		ps := x.postings[t]
		if len(ps) == 0 {
			continue
		}
		df := float64(len(ps))
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		for _, p := range ps {
			dl := float64(x.docs[p.slot].length)
			f := float64(p.tf)
			if x.acc[p.slot] == 0 {
				x.touched = append(x.touched, p.slot)
			}
			x.acc[p.slot] += float64(qc) * idf * f * (bm25K1 + 1) / (f + bm25K1*(1-bm25B+bm25B*dl/avg))
		}
	}
	out := make([]scored, 0, len(x.touched))
	for _, slot := range x.touched {
		if s := x.acc[slot]; s > 0 {
			out = append(out, scored{x.docs[slot].id, s})
		}
		x.acc[slot] = 0
	}
	return out
}

// score returns the positive BM25 score of every document matching query.
func (x *bm25Index) score(query string) map[int64]float64 {
	list := x.scoreList(query)
	if list == nil {
		return nil
	}
	m := make(map[int64]float64, len(list))
	for _, s := range list {
		m[s.id] = s.s
	}
	return m
}
