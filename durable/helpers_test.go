package durable_test

import (
	"log/slog"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/workflow"
)

type clientStartOptions = client.StartWorkflowOptions

var mockAny = mock.Anything

// quiet drops the test environment's log (every activity, at debug).
var quiet = log.NewStructuredLogger(slog.New(slog.DiscardHandler))

// converterGet decodes the input a run continued as new with.
func converterGet(can *workflow.ContinueAsNewError, v any) error {
	return converter.GetDefaultDataConverter().FromPayloads(can.Input, v)
}
