package retrieve

import (
	"context"
	"strconv"
	"strings"

	"github.com/autoagent-go/autoagent/internal/marker"
	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/session"
)

type sessionKey struct{}

// WithSession returns ctx naming the session a run continues, for
// [Sessions]. autoagent.Runtime.Continue sets it.
func WithSession(ctx context.Context, k session.Key) context.Context {
	return context.WithValue(ctx, sessionKey{}, k)
}

// Sessions returns a [Retriever] over the stored conversations of the
// user whose session the run continues (see [WithSession]): every session
// of that user, searched with the store's BM25 (session.Store.Search). A
// run with no session named gets nothing. A message is trusted only when
// it is the user's own and carries no untrusted content; the model's
// answers and tool results are data, since they may repeat what a page
// said.
func Sessions(st session.Store) Retriever {
	return Func(func(ctx context.Context, query string, k int) ([]Passage, error) {
		key, ok := ctx.Value(sessionKey{}).(session.Key)
		if !ok || k <= 0 {
			return nil, nil
		}
		hits, err := st.Search(ctx, session.Key{User: key.User}, query, k)
		if err != nil {
			return nil, err
		}
		out := make([]Passage, 0, len(hits))
		for _, h := range hits {
			text := messageText(h.Message)
			if strings.TrimSpace(text) == "" {
				continue
			}
			out = append(out, Passage{
				Source:    "session " + h.Key.String() + " #" + strconv.FormatInt(h.Seq, 10),
				Text:      text,
				Score:     h.Score,
				Untrusted: h.Message.Role != llm.RoleUser || marker.Tainted(h.Message),
			})
		}
		return out, nil
	})
}

// messageText is what a stored message says: its text, and its tool
// results' contents.
func messageText(m llm.Message) string {
	parts := []string{m.Text()}
	for _, r := range m.ToolResults() {
		parts = append(parts, r.Content)
	}
	return strings.TrimSpace(strings.Join(parts, "\n"))
}
