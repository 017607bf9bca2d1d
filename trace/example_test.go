package trace_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/autoagent-go/autoagent/trace"
)

func Example() {
	var file bytes.Buffer
	tr := trace.New(trace.JSONL(&file))
	run := tr.Emit(trace.Event{Type: trace.RunStart, Payload: trace.Run{Model: "gpt-x", MaxSteps: 8}})
	call := tr.Emit(trace.Event{Type: trace.ToolCallStart, ParentID: run, Payload: trace.ToolCall{
		Name: "http_get", Arguments: `{"url":"https://api.example.com/v1?key=AbCdEf123456","headers":{"Authorization":"Bearer abcdefgh12345678"}}`,
	}})
	tr.Emit(trace.Event{Type: trace.ToolCallEnd, ParentID: call, Payload: trace.ToolCall{Name: "http_get", Status: "ok", DurationMS: 12.5}})
	tr.Emit(trace.Event{Type: "deploy", ParentID: run, Payload: trace.Fields{"target": "staging", "replicas": 3}})
	tr.Emit(trace.Event{Type: trace.RunEnd, ParentID: run, Payload: trace.Run{Status: "ok", Steps: 1}})

	// Read the file back: each payload comes back as its type's family.
	lines := bufio.NewScanner(strings.NewReader(file.String()))
	for lines.Scan() {
		var ev trace.Event
		if err := json.Unmarshal(lines.Bytes(), &ev); err != nil {
			panic(err)
		}
		switch p := ev.Payload.(type) {
		case trace.Run:
			fmt.Printf("%s: model %q, status %q\n", ev.Type, p.Model, p.Status)
		case trace.ToolCall:
			fmt.Printf("%s: %s(%s) %v ms\n", ev.Type, p.Name, p.Arguments, p.DurationMS)
		case trace.Fields:
			fmt.Printf("%s: %v %v\n", ev.Type, p["target"], p["replicas"])
		}
	}
	sum, _ := trace.Summarize(strings.NewReader(file.String()))
	fmt.Println(sum.Runs, sum.ToolCalls, sum.RunsByStatus["ok"])
	// Output:
	// run_start: model "gpt-x", status ""
	// tool_call_start: http_get({"url":"https://api.example.com/v1?key=***REDACTED***","headers":{"Authorization":"***REDACTED***"}}) 0 ms
	// tool_call_end: http_get() 12.5 ms
	// deploy: staging 3
	// run_end: model "", status "ok"
	// 1 1 1
}

func ExampleRedact() {
	fmt.Println(trace.Redact(`curl -H "x-api-key: 0123456789abcdef" https://example.com`))
	fmt.Println(trace.Redact(`{"user":"bob","password":"hunter2"}`))
	// Output:
	// curl -H "x-api-key: ***REDACTED***" https://example.com
	// {"user":"bob","password":"***REDACTED***"}
}
