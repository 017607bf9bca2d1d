package memory

import (
	"cmp"
	"slices"
)

// scored is an id with its score.
type scored struct {
	id int64
	s  float64
}

// byScore orders best first, ties by ascending id (a stable, reproducible
// order).
// Scores are finite (BM25, cosine, RRF), so plain comparisons do.
func byScore(a, b scored) int {
	switch {
	case a.s > b.s:
		return -1
	case a.s < b.s:
		return 1
	}
	return cmp.Compare(a.id, b.id)
}

// rankWindow is how deep each ranking is fused: the top max(100, 10·k)
// entries, as search engines do (a "rank window"). Deeper entries add at
// most 1/(61+window) each and cost a full sort of every match.
func rankWindow(k int) int { return max(100, 10*k) }

// ranked returns the ids of scores, best first, ties by ascending id.
func ranked(scores map[int64]float64) []int64 {
	all := make([]scored, 0, len(scores))
	for id, s := range scores {
		all = append(all, scored{id, s})
	}
	return rankList(all, len(all))
}

// rankList returns the ids of the k best of list, best first. It reorders
// list. Selecting the top k costs O(n log k), not a full sort.
func rankList(list []scored, k int) []int64 {
	if k < len(list) {
		t := newTopK(k)
		for _, x := range list {
			t.push(x)
		}
		return t.ranked()
	}
	slices.SortFunc(list, byScore)
	ids := make([]int64, len(list))
	for i, x := range list {
		ids[i] = x.id
	}
	return ids
}

// topK keeps the k best scores pushed into it: a heap whose root is the
// worst kept, so a candidate is compared once with it.
type topK struct {
	k int
	h []scored
}

func newTopK(k int) *topK { return &topK{k: k, h: make([]scored, 0, k)} }

func (t *topK) push(x scored) {
	switch {
	case len(t.h) < t.k:
		t.h = append(t.h, x)
		siftUp(t.h, len(t.h)-1)
	case t.k > 0 && byScore(x, t.h[0]) < 0:
		t.h[0] = x
		siftDown(t.h, 0)
	}
}

// ranked returns the kept ids, best first.
func (t *topK) ranked() []int64 {
	slices.SortFunc(t.h, byScore)
	ids := make([]int64, len(t.h))
	for i, x := range t.h {
		ids[i] = x.id
	}
	return ids
}

// The heap keeps the worst (greatest by byScore) at the root.
func siftUp(h []scored, i int) {
	for i > 0 {
		p := (i - 1) / 2
		if byScore(h[i], h[p]) <= 0 {
			return
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

func siftDown(h []scored, i int) {
	for {
		l, worst := 2*i+1, i
		if l < len(h) && byScore(h[l], h[worst]) > 0 {
			worst = l
		}
		if r := l + 1; r < len(h) && byScore(h[r], h[worst]) > 0 {
			worst = r
		}
		if worst == i {
			return
		}
		h[i], h[worst] = h[worst], h[i]
		i = worst
	}
}
