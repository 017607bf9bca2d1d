package sqlitestore

import (
	"context"
	"encoding/json"
	"iter"
	"strings"

	"github.com/autoagent-go/autoagent/llm"
)

// extractor answers a Fact memory's model calls: one "add" operation per
// user line of the new exchanges, so compaction stores facts.
type extractor struct{}

func (extractor) Complete(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	prompt := req.Messages[len(req.Messages)-1].Text()
	_, exchanges, _ := strings.Cut(prompt, "New exchanges:\n")
	ops := []map[string]string{}
	for _, line := range strings.Split(exchanges, "\n") {
		if fact, ok := strings.CutPrefix(line, "user: "); ok {
			ops = append(ops, map[string]string{"op": "add", "fact": fact, "subject": "user"})
		}
	}
	b, _ := json.Marshal(map[string]any{"operations": ops})
	return &llm.Response{Message: llm.AssistantText(string(b)), FinishReason: llm.FinishStop,
		Usage: &llm.Usage{InputTokens: 20, OutputTokens: 8, TotalTokens: 28}}, nil
}

func (e extractor) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.StreamEvent, error] {
	return llm.StreamFromComplete(ctx, req, e.Complete)
}
