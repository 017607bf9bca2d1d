// Package memory keeps what an agent should remember across a long
// conversation or across sessions: a [Memory] compacts the transcript
// before a run and recalls relevant past content on demand.
//
//	mem, err := memory.NewFact(ctx, memory.FactOptions{
//		Provider: cheapModel,           // extracts facts from old turns
//		Path:     "memory/alice.json",  // one human-readable store per person
//		Identity: "alice",
//	})
//	if err != nil {
//		return err // a corrupt store is an error naming the file, never an empty memory
//	}
//	msgs, usage, err := mem.Compact(ctx, history)
//	if err != nil {
//		msgs = history // nothing was lost: run with the full history
//	}
//	budget.Add(usage)
//
// # Choosing a memory
//
// [Buffer] is a sliding window with a hard cap; it makes no model call and
// remembers nothing it dropped. [Summarizing] folds the older part of a
// conversation into a running summary, one cheap model call per fold: it is
// conversation memory, which a fresh conversation does not inherit. [Fact]
// is identity memory: it turns old turns into short facts about a person,
// keeps them in a store across conversations, replaces contradicted facts
// without erasing their history (bi-temporal records), and recalls them by
// BM25, fused with embeddings when an [EmbedFunc] is given.
//
// # Guarantees
//
// Every memory here, and any memory that passes [memorytest.Run], keeps
// these promises for Compact: the input is never modified; system messages
// are kept in order; the non-system messages returned are a suffix of the
// input's, starting at a user message when some were dropped; an assistant
// message with tool calls and the tool results answering it are kept or
// dropped together; a memory's own messages (summary, facts) are replaced,
// never duplicated, when a persisted history is compacted again; and when
// dropped messages held external untrusted content, the output carries the
// taint sentinel. A memory whose model call fails returns an error and drops
// nothing.
//
// # Optional interfaces
//
// A memory may also implement [Rememberer] (store a fact on request),
// [Forgetter] (erase by id, or in plain language, fail-closed) and
// [Flusher] (wait for background work). The tools of package memtool
// expose them to the model.
//
// # Storage
//
// [Fact] stores its records through a [FactStore]: by default a JSON file
// (written atomically, readable and editable by people, vectors in a
// sidecar) or process memory; other stores implement the same small
// interface.
//
// [memorytest.Run]: https://pkg.go.dev/github.com/autoagent-go/autoagent/memory/memorytest#Run
package memory

import (
	"context"

	"github.com/autoagent-go/autoagent/llm"
)

// Memory compacts conversations and recalls from them.
//
// The agent loop calls Compact once at the start of a run (never on resume)
// and Recall from the recall tool. Implementations must be safe for
// concurrent use.
type Memory interface {
	// Compact returns the messages to run with instead of msgs: system
	// messages kept, older turns folded into whatever the memory keeps.
	// It must not modify msgs. usage is the memory's own model spend for
	// this call (nil when it made no model call), and may be set with a
	// non-nil error when a failed call was still billed; the loop counts
	// it in the run's budget. On error the loop runs with msgs unchanged,
	// so an implementation must never lose data by failing half-way.
	Compact(ctx context.Context, msgs []llm.Message) (out []llm.Message, usage *llm.Usage, err error)

	// Recall returns up to k messages relevant to query, most relevant
	// first, and none when k <= 0. It never calls a model unless the
	// implementation documents it.
	Recall(ctx context.Context, query string, k int) ([]llm.Message, error)
}
