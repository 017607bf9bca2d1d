package loop

import (
	"context"
	"encoding/json"

	"github.com/autoagent-go/autoagent/internal/loopwire"
	"github.com/autoagent-go/autoagent/tool"
)

// wire is the loop's side of internal/loopwire: what durable needs of the
// loop's unexported state, kept out of the loop's public API.
type wire struct{}

func init() { loopwire.Install(wire{}) }

func (wire) RemoteCallContext(ctx context.Context, c loopwire.Call, tainted bool) (context.Context, func() loopwire.CallReport) {
	return remoteCallContext(ctx, c, tainted)
}

func (wire) ReplayProgramContext(ctx context.Context, c loopwire.Call, tainted bool, record []loopwire.RecordedCall) (context.Context, func() loopwire.ProgramReplay) {
	return replayProgramContext(ctx, c, tainted, record)
}

func (wire) NestedPaused(ctx context.Context) bool { return nestedPaused(ctx) }

func (wire) ParseDelegation(args json.RawMessage, specialists []string) (loopwire.Delegation, *tool.Result) {
	return parseDelegation(args, specialists)
}
