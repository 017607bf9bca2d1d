// Package retrieve finds, for a question, passages of what the agent may
// know (a directory of documents, a fact memory, past sessions), which the
// agent loop puts before the model in one bounded block on every model
// call (loop.Agent.Knowledge.Retrieval).
//
//	docs, err := retrieve.OpenFiles("docs", retrieve.FilesOptions{})
//	if err != nil {
//		return err // the directory cannot be read
//	}
//	for _, s := range docs.Skipped() {
//		log.Printf("not indexed: %s (%s)", s.Path, s.Reason) // binary, huge, linked out
//	}
//	agent.Retrieval = retrieve.Config{Retriever: retrieve.Fuse(docs, retrieve.Facts(mem))}
//
// # Rankings
//
// [Files] ranks chunks of the documents with BM25 (internal/bm25, the
// ranking fact recall and session search use) and, given an [Embedder]
// (openai.Provider.Embed, gemini.Provider.Embed), also by the cosine of
// their embeddings, fusing both by Reciprocal Rank Fusion as fact recall
// does. [Fuse] merges the passages of several retrievers the same way.
// Scores are comparable within one retriever's answer only.
//
// # Trust
//
// A passage is data the model reads, never instructions: the loop frames
// every passage marked Untrusted as external content (and the run becomes
// tainted). Files are untrusted unless FilesOptions.Trusted says the user
// wrote them; a fact keeps the taint it was stored with; a session
// message is trusted only when it is the user's own, untainted.
package retrieve

import (
	"context"
	"errors"
)

// Passage is one piece of text a retriever found.
type Passage struct {
	// Source says where the text comes from: "docs/setup.md:12-30",
	// "fact #4", "session ada/support #17". It is shown to the model.
	Source string `json:"source"`
	// Text is the passage itself.
	Text string `json:"text"`
	// Score ranks the passage among those of the same answer, higher
	// first; its scale is the retriever's.
	Score float64 `json:"score"`
	// Untrusted marks text written by someone other than the user: the
	// loop frames it as data, and a run that reads it is tainted.
	Untrusted bool `json:"untrusted,omitempty"`
}

// Retriever finds passages relevant to a query.
//
// The agent loop calls Retrieve before each model call whose question
// changed, with the run's context, from the run's goroutine; a Retriever
// shared by concurrent runs must be safe for concurrent use. It returns
// at most k passages (none when k <= 0), best first; the caller owns the
// slice. An error fails only the retrieval: the loop traces it and calls
// the model without a block. Retrieve must return promptly once ctx ends.
type Retriever interface {
	Retrieve(ctx context.Context, query string, k int) ([]Passage, error)
}

// Func adapts a function to a [Retriever].
type Func func(ctx context.Context, query string, k int) ([]Passage, error)

// Retrieve calls f.
func (f Func) Retrieve(ctx context.Context, query string, k int) ([]Passage, error) {
	return f(ctx, query, k)
}

// ErrInvalid is wrapped by the errors of options that cannot work.
var ErrInvalid = errors.New("retrieve: invalid options")
