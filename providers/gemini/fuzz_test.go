package gemini

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/autoagent-go/autoagent/llm"
)

// FuzzReadStream feeds arbitrary bytes to the stream parser: it must never
// panic, must end with exactly one terminal element (done or error), and
// every tool call it yields must have an id and JSON arguments.
func FuzzReadStream(f *testing.F) {
	f.Add([]byte(firstChunk + `data: {"candidates":[{"content":{"parts":[{"text":"!"}]},"finishReason":"STOP"}]}` + "\r\n\r\n"))
	f.Add([]byte(`data: {"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","willContinue":true}},{"functionCall":{"partialArgs":[{"jsonPath":"$.a[2].b","stringValue":"x","willContinue":true}],"willContinue":true}},{"functionCall":{}}]},"finishReason":"STOP"}]}` + "\r\n\r\n"))
	f.Add([]byte(`data: {"error":{"code":503,"status":"UNAVAILABLE"}}` + "\n\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		terminal := 0
		readStream(context.Background(), bytes.NewReader(body), "m", "", func(ev llm.StreamEvent, err error) bool {
			if terminal > 0 {
				t.Fatalf("element after the terminal one: %+v %v", ev, err)
			}
			if err != nil || ev.Type == llm.StreamDone {
				terminal++
			}
			if ev.Type == llm.StreamToolCall && (ev.ToolCall == nil || ev.ToolCall.ID == "" || !json.Valid(ev.ToolCall.Arguments)) {
				t.Fatalf("bad tool call %+v", ev.ToolCall)
			}
			return true
		})
		if terminal != 1 {
			t.Fatalf("%d terminal elements", terminal)
		}
	})
}

// FuzzSanitizeSchema checks that any JSON object schema translates without
// panicking into a schema that encodes.
func FuzzSanitizeSchema(f *testing.F) {
	f.Add(`{"type":"object","properties":{"a":{"type":["null","string"]},"b":{"$ref":"#/$defs/B"}},"$defs":{"B":{"anyOf":[{"$ref":"#"},{"type":"null"}]}}}`)
	f.Add(`{"allOf":[{"$ref":"#/allOf/0"}],"items":{"enum":[1,null,"x"]}}`)
	f.Fuzz(func(t *testing.T, schema string) {
		out, err := sanitizeSchema(json.RawMessage(schema))
		if err != nil {
			return
		}
		if _, err := json.Marshal(out); err != nil {
			t.Fatalf("sanitised schema does not encode: %v", err)
		}
	})
}
