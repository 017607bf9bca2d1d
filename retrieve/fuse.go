package retrieve

import (
	"context"
	"errors"

	"github.com/autoagent-go/autoagent/internal/rank"
)

// Fuse returns a [Retriever] asking each of rs for k passages and merging
// their rankings by Reciprocal Rank Fusion (internal/rank, as fact recall
// fuses BM25 with embeddings): a passage ranked well by several sources
// comes first, and no source's score scale dominates another's. A passage
// found by two sources (same source and text) counts once. A source that
// fails does not stop the others: their passages come back with the
// error; only when every source failed are there no passages.
func Fuse(rs ...Retriever) Retriever {
	return Func(func(ctx context.Context, query string, k int) ([]Passage, error) {
		if k <= 0 {
			return nil, nil
		}
		type key struct{ source, text string }
		ids := make(map[key]int64)
		var all []Passage
		var rankings [][]int64
		var errs []error
		for _, r := range rs {
			ps, err := r.Retrieve(ctx, query, k)
			if err != nil {
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				errs = append(errs, err)
			}
			ranking := make([]int64, 0, len(ps))
			for _, p := range ps {
				kk := key{p.Source, p.Text}
				id, ok := ids[kk]
				if !ok {
					all = append(all, p)
					id = int64(len(all))
					ids[kk] = id
				} else if p.Untrusted {
					all[id-1].Untrusted = true // the stricter reading wins
				}
				ranking = append(ranking, id)
			}
			rankings = append(rankings, ranking)
		}
		fused := rank.FuseRRFScored(rankings...)
		out := make([]Passage, 0, min(k, len(fused)))
		for _, s := range fused[:min(k, len(fused))] {
			p := all[s.ID-1]
			p.Score = s.Score
			out = append(out, p)
		}
		return out, errors.Join(errs...)
	})
}
