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
}

// NewWorker returns a worker of taskQueue ("" is [DefaultTaskQueue]) that
// runs agent runs with acts: start it with Run or Start.
func NewWorker(c client.Client, taskQueue string, acts *Activities) worker.Worker {
	if taskQueue == "" {
		taskQueue = DefaultTaskQueue
	}
	w := worker.New(c, taskQueue, worker.Options{})
	Register(w, acts)
	return w
}
