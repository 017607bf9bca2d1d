package refusal_test

import (
	"encoding/json"
	"fmt"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/loop/refusal"
)

// A refusal is written into a result with its kind, survives JSON, and is
// read back by kind; a tool's result reading the same is not one.
func ExampleOf() {
	res := refusal.New(refusal.PolicyDenied, "secrets stay on the host").Result("c1", "read_env")
	data, _ := json.Marshal(res)
	var back llm.ToolResult
	_ = json.Unmarshal(data, &back)
	if rf, ok := refusal.Of(back); ok {
		fmt.Println(rf.Kind, "|", rf.Text, "|", rf.Kind.MayHaveRun())
	}
	_, ok := refusal.Of(llm.ToolResult{Content: "ToolPolicyDenied: said a tool", IsError: true})
	fmt.Println(ok)
	// Output:
	// ToolPolicyDenied | ToolPolicyDenied: secrets stay on the host | false
	// false
}
