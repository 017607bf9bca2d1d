package durable

import (
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// Register registers the workflow and the activities of acts on w, under
// their names ([WorkflowName], [ActivityModel], …).
func Register(w worker.Registry, acts *Activities) {
	w.RegisterWorkflowWithOptions(Run, workflow.RegisterOptions{Name: WorkflowName})
	w.RegisterActivityWithOptions(acts.Describe, activity.RegisterOptions{Name: ActivityDescribe})
	w.RegisterActivityWithOptions(acts.Model, activity.RegisterOptions{Name: ActivityModel})
	w.RegisterActivityWithOptions(acts.Tool, activity.RegisterOptions{Name: ActivityTool})
	w.RegisterActivityWithOptions(acts.Policy, activity.RegisterOptions{Name: ActivityPolicy})
	w.RegisterActivityWithOptions(acts.Program, activity.RegisterOptions{Name: ActivityProgram})
}

// NewWorker returns a worker of taskQueue ("" is [DefaultTaskQueue]) that
// runs agent runs with acts: start it with Run or Start. Its pollers scale
// with the load (between 2 and 32 of each kind): an agent run is many
// short tasks, and the SDK's fixed two pollers cap a worker at a few dozen
// of them a second. For other options, make the worker yourself and call
// [Register].
func NewWorker(c client.Client, taskQueue string, acts *Activities) worker.Worker {
	if taskQueue == "" {
		taskQueue = DefaultTaskQueue
	}
	scale := worker.PollerBehaviorAutoscalingOptions{InitialNumberOfPollers: 4, MinimumNumberOfPollers: 2, MaximumNumberOfPollers: 32}
	w := worker.New(c, taskQueue, worker.Options{
		WorkflowTaskPollerBehavior: worker.NewPollerBehaviorAutoscaling(scale),
		ActivityTaskPollerBehavior: worker.NewPollerBehaviorAutoscaling(scale),
	})
	Register(w, acts)
	return w
}
