package codemode_test

import (
	"encoding/json"
	"fmt"

	"github.com/autoagent-go/autoagent/codemode"
	"github.com/autoagent-go/autoagent/llm"
)

// The declarations the model reads in run_program's description.
func ExampleDeclarations() {
	fmt.Print(codemode.Declarations([]llm.ToolSpec{{
		Name:         "get_order",
		Description:  "Fetch an order by id.",
		InputSchema:  json.RawMessage(`{"type":"object","properties":{"id":{"type":"integer","description":"The order's number."}},"required":["id"]}`),
		OutputSchema: json.RawMessage(`{"type":"object","properties":{"id":{"type":"integer"},"refund":{"type":"number"}},"required":["id","refund"]}`),
	}}))
	// Output:
	// declare const tools: {
	//   /** Fetch an order by id. */
	//   get_order(args: {
	//     /** The order's number. */
	//     id: number;
	//   }): Promise<{
	//     id: number;
	//     refund: number;
	//   }>;
	// };
}
