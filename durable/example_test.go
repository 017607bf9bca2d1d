package durable_test

import (
	"fmt"

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
