package durable_test

import (
	"context"
	"iter"
	"log/slog"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/workflow"

	"github.com/autoagent-go/autoagent/llm"
)

type clientStartOptions = client.StartWorkflowOptions

var mockAny = mock.Anything

// quiet drops the test environment's log (every activity, at debug).
var quiet = log.NewStructuredLogger(slog.New(slog.DiscardHandler))

// converterGet decodes the input a run continued as new with.
func converterGet(can *workflow.ContinueAsNewError, v any) error {
	return converter.GetDefaultDataConverter().FromPayloads(can.Input, v)
}

// stepAnswer is a stateless model that answers text at once.
type stepAnswer string

func (s stepAnswer) Complete(context.Context, *llm.Request) (*llm.Response, error) {
	return &llm.Response{Message: llm.AssistantText(string(s)), Usage: &llm.Usage{InputTokens: 4, OutputTokens: 1}, FinishReason: llm.FinishStop}, nil
}

func (s stepAnswer) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.StreamEvent, error] {
	return llm.StreamFromComplete(ctx, req, s.Complete)
}

// scriptedTurns is a stateless model that makes the calls, one per step,
// then answers "done".
type scriptedTurns []llm.ToolCall

func (s scriptedTurns) Complete(_ context.Context, req *llm.Request) (*llm.Response, error) {
	step := 0
	for _, m := range req.Messages {
		if m.Role == llm.RoleAssistant {
			step++
		}
	}
	if step >= len(s) {
		return &llm.Response{Message: llm.AssistantText("done"), FinishReason: llm.FinishStop}, nil
	}
	c := s[step]
	return &llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{{Type: llm.PartToolCall, ToolCall: &c}}}, FinishReason: llm.FinishToolCalls}, nil
}

func (s scriptedTurns) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.StreamEvent, error] {
	return llm.StreamFromComplete(ctx, req, s.Complete)
}
