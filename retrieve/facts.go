package retrieve

import (
	"context"
	"strconv"

	"github.com/autoagent-go/autoagent/memory"
)

// Facts returns a [Retriever] over the current facts of a fact memory,
// ranked by its own recall (BM25, fused with embeddings when the memory
// has an EmbedFunc). A fact learnt from untrusted content stays
// untrusted. Scores are reciprocal ranks (1, 1/2, 1/3…): recall gives an
// order, not scores.
func Facts(f *memory.Fact) Retriever {
	return Func(func(ctx context.Context, query string, k int) ([]Passage, error) {
		rs, err := f.RecallFacts(ctx, query, k)
		if err != nil {
			return nil, err
		}
		out := make([]Passage, len(rs))
		for i, r := range rs {
			text := r.Text
			if r.Subject != "" {
				text += " (" + r.Subject + ")"
			}
			out[i] = Passage{Source: "fact #" + strconv.FormatInt(r.ID, 10), Text: text, Score: 1 / float64(i+1), Untrusted: r.Tainted}
		}
		return out, nil
	})
}
