package durable_test

import (
	"context"
	"fmt"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"

	"github.com/autoagent-go/autoagent/durable"
	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/loop"
	"github.com/autoagent-go/autoagent/providers/scripted"
)

// A run of the workflow in Temporal's test environment (in process, no
// server): the same registration a worker makes.
func ExampleRun() {
	agent := &loop.Agent{Provider: scripted.New(scripted.Turn{Text: "Hello from a workflow.", Usage: &llm.Usage{InputTokens: 12, OutputTokens: 5}})}
	var suite testsuite.WorkflowTestSuite
	suite.SetLogger(quiet)
	env := suite.NewTestWorkflowEnvironment()
	durable.Register(env, &durable.Activities{Agent: agent})
	env.ExecuteWorkflow(durable.WorkflowName, durable.WorkflowInput{RunInput: durable.RunInput{Prompt: "Say hello"}})
	var res loop.Result
	if err := env.GetWorkflowResult(&res); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Output, res.StopReason, res.Usage.InputTokens+res.Usage.OutputTokens)
	// Output: Hello from a workflow. done 17
}

// A batch of runs of a fast model asks for local model calls: each run
// whose tools are idempotent is one workflow task. Nobody can read a run's
// state while its model call runs (see Options.LocalModelCalls), so a run
// someone watches keeps the default.
func ExampleOptions_localModelCalls() {
	agent := &loop.Agent{Provider: scripted.New(scripted.Turn{Text: "positive"})}
	var suite testsuite.WorkflowTestSuite
	suite.SetLogger(quiet)
	env := suite.NewTestWorkflowEnvironment()
	durable.Register(env, &durable.Activities{Agent: agent})
	local := 0
	env.SetOnLocalActivityStartedListener(func(info *activity.Info, _ context.Context, _ []any) {
		if info.ActivityType.Name == durable.ActivityModel {
			local++
		}
	})
	// With a client: runs.Start(ctx, id, input, durable.Options{LocalModelCalls: true}).
	opts := durable.Options{LocalModelCalls: true}
	env.ExecuteWorkflow(durable.WorkflowName, durable.WorkflowInput{RunInput: durable.RunInput{Prompt: "Classify: I love it"}, Options: opts})
	var res loop.Result
	if err := env.GetWorkflowResult(&res); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Output, "local model calls:", local)
	// Output: positive local model calls: 1
}
