package durable

import (
	"context"
	"errors"
	"fmt"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/loop"
)

// Client starts and steers runs on a Temporal server. It holds no model
// key and no tool: the workers do.
type Client struct {
	// Temporal is the connection (client.Dial).
	Temporal client.Client
	// TaskQueue is the workers' queue; "" is [DefaultTaskQueue].
	TaskQueue string
}

// ErrNoRun is returned for a run ID the server does not know.
var ErrNoRun = errors.New("durable: no such run")

// Start starts a run with the workflow ID id ("" lets the server choose)
// and returns its ID.
func (c *Client) Start(ctx context.Context, id string, in RunInput, opts Options) (string, error) {
	queue := c.TaskQueue
	if queue == "" {
		queue = DefaultTaskQueue
	}
	// EnableEagerStart: when this client has a worker of the queue (a
	// program that runs both), the server hands the run's first workflow
	// task back in the start's answer instead of through its queue; with
	// no such worker it is ignored.
	run, err := c.Temporal.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: queue, EnableEagerStart: true}, WorkflowName, WorkflowInput{RunInput: in, Options: opts})
	if err != nil {
		return "", fmt.Errorf("durable: start a run: %w", err)
	}
	return run.GetID(), nil
}

// Status asks a run for its state.
func (c *Client) Status(ctx context.Context, id string) (*Status, error) {
	v, err := c.Temporal.QueryWorkflow(ctx, id, "", QueryState)
	if err != nil {
		var late *serviceerror.DeadlineExceeded
		if ctx.Err() == nil && (errors.As(err, &late) || errors.Is(err, context.DeadlineExceeded)) {
			// The server's deadline for a query, not the caller's.
			return nil, fmt.Errorf("%w: the run did not answer within the server's deadline for a query: no worker of its task queue answered (is one running?), or its workflow task is busy (under Options.LocalModelCalls a run answers only between workflow tasks, which may be 8 to 16 s apart while a model call runs); try again", c.runError(id, "query", err))
		}
		return nil, c.runError(id, "query", err)
	}
	var st Status
	if err := v.Get(&st); err != nil {
		return nil, fmt.Errorf("durable: run %s: the state: %w", id, err)
	}
	return &st, nil
}

// Decide sends decisions for a run's pending calls. The run validates
// them first: a decision for a call that is not pending is refused, and
// nothing of it is applied.
func (c *Client) Decide(ctx context.Context, id string, ds ...Decision) (*Status, error) {
	h, err := c.Temporal.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID: id, UpdateName: UpdateDecide, Args: []any{ds}, WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	if err != nil {
		var nf *serviceerror.NotFound
		if errors.As(err, &nf) {
			// The server says not found for a run that has ended, too.
			if d, derr := c.Temporal.DescribeWorkflow(ctx, id, ""); derr == nil {
				return nil, fmt.Errorf("durable: run %s has ended (%s): it awaits no decision", id, statusName(d.RawResponse.GetWorkflowExecutionInfo().GetStatus()))
			}
		}
		return nil, c.runError(id, "decide", err)
	}
	var st Status
	if err := h.Get(ctx, &st); err != nil {
		return nil, c.runError(id, "decide", err)
	}
	return &st, nil
}

// Result waits for a run to end and returns its Result: the JSON a local
// run prints with --json. Tainted and UsageReported, which that JSON does
// not carry, are read from the transcript (its untrusted frames) and the
// usage (not all zeros).
func (c *Client) Result(ctx context.Context, id string) (*loop.Result, error) {
	var res loop.Result
	if err := c.Temporal.GetWorkflow(ctx, id, "").Get(ctx, &res); err != nil {
		return nil, c.runError(id, "result", err)
	}
	// What the Result's JSON does not carry, read from what it does: the
	// untrusted frames in the transcript, and usage that is not all zeros
	// (a run that reported none has zeros, never an estimate).
	res.Tainted = loop.IsTainted(res.Messages)
	res.UsageReported = res.Usage != (llm.Usage{})
	return &res, nil
}

// Cancel cancels a run: its running tool sees its context cancelled, and
// the run ends cancelled.
func (c *Client) Cancel(ctx context.Context, id string) error {
	if err := c.Temporal.CancelWorkflow(ctx, id, ""); err != nil {
		return c.runError(id, "cancel", err)
	}
	return nil
}

// RunInfo is one run as List shows it.
type RunInfo struct {
	ID     string `json:"id"`
	Status string `json:"status"` // Temporal's: running, completed, failed, …
	Start  string `json:"start"`
}

// List returns the runs the server knows, newest first.
func (c *Client) List(ctx context.Context) ([]RunInfo, error) {
	var out []RunInfo
	var token []byte
	for {
		resp, err := c.Temporal.ListWorkflow(ctx, &workflowListRequest{Query: "WorkflowType = '" + WorkflowName + "'", NextPageToken: token})
		if err != nil {
			return nil, fmt.Errorf("durable: list runs: %w", err)
		}
		for _, e := range resp.Executions {
			out = append(out, RunInfo{
				ID:     e.GetExecution().GetWorkflowId(),
				Status: statusName(e.GetStatus()),
				Start:  e.GetStartTime().AsTime().UTC().Format("2006-01-02T15:04:05Z"),
			})
		}
		token = resp.NextPageToken
		if len(token) == 0 {
			return out, nil
		}
	}
}

func statusName(s enumspb.WorkflowExecutionStatus) string {
	switch s {
	case enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING:
		return "running"
	case enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED:
		return "completed"
	case enumspb.WORKFLOW_EXECUTION_STATUS_FAILED:
		return "failed"
	case enumspb.WORKFLOW_EXECUTION_STATUS_CANCELED:
		return "cancelled"
	case enumspb.WORKFLOW_EXECUTION_STATUS_TERMINATED:
		return "terminated"
	case enumspb.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW:
		return "continued"
	case enumspb.WORKFLOW_EXECUTION_STATUS_TIMED_OUT:
		return "timed_out"
	}
	return s.String()
}

func (c *Client) runError(id, what string, err error) error {
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return fmt.Errorf("%w: %s", ErrNoRun, id)
	}
	return fmt.Errorf("durable: run %s: %s: %w", id, what, err)
}

type workflowListRequest = workflowservice.ListWorkflowExecutionsRequest
