// Package memory keeps what an agent should remember across a long
// conversation or across sessions: a [Memory] compacts the transcript
// before a run and recalls relevant past content on demand.
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
	// this call (nil when it made no model call); the loop counts it in the
	// run's budget. On error the loop runs with msgs unchanged, so an
	// implementation must never lose data by failing half-way.
	Compact(ctx context.Context, msgs []llm.Message) (out []llm.Message, usage *llm.Usage, err error)

	// Recall returns up to k messages relevant to query, most relevant
	// first. It never calls a model unless the implementation documents it.
	Recall(ctx context.Context, query string, k int) ([]llm.Message, error)
}
