package trace_test

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/autoagent-go/autoagent/trace"
)

func Example() {
	var file bytes.Buffer
	tr := trace.New(trace.JSONL(&file), trace.SinkFunc(func(ev trace.Event) {
		fmt.Println(strings.TrimSpace(fmt.Sprint(ev.Type, " ", ev.Payload.Name, " ", ev.Payload.Arguments)))
	}))
	run := tr.Emit(trace.Event{Type: trace.RunStart})
	call := tr.Emit(trace.Event{Type: trace.ToolCallStart, ParentID: run, Payload: trace.Payload{
		Name: "http_get", Arguments: `{"url":"https://api.example.com/v1?key=AbCdEf123456","headers":{"Authorization":"Bearer abcdefgh12345678"}}`,
	}})
	tr.Emit(trace.Event{Type: trace.ToolCallEnd, ParentID: call, Payload: trace.Payload{Name: "http_get", Status: "ok"}})
	tr.Emit(trace.Event{Type: trace.RunEnd, ParentID: run, Payload: trace.Payload{Status: "ok", Steps: 1}})

	sum, _ := trace.Summarize(strings.NewReader(file.String()))
	fmt.Println(sum.Runs, sum.ToolCalls, sum.RunsByStatus["ok"])
	// Output:
	// run_start
	// tool_call_start http_get {"url":"https://api.example.com/v1?key=***REDACTED***","headers":{"Authorization":"***REDACTED***"}}
	// tool_call_end http_get
	// run_end
	// 1 1 1
}

func ExampleRedact() {
	fmt.Println(trace.Redact(`curl -H "x-api-key: 0123456789abcdef" https://example.com`))
	fmt.Println(trace.Redact(`{"user":"bob","password":"hunter2"}`))
	// Output:
	// curl -H "x-api-key: ***REDACTED***" https://example.com
	// {"user":"bob","password":"***REDACTED***"}
}
