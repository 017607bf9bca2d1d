package anthropic

import (
	"bytes"
	"context"
	"testing"

	"github.com/autoagent-go/autoagent/llm"
)

// FuzzReadStream feeds arbitrary bytes to the stream parser: it must never
// panic, and must end every stream with exactly one terminal element, a
// done event or an error, after which nothing follows.
func FuzzReadStream(f *testing.F) {
	f.Add([]byte(streamBody("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")))
	f.Add([]byte(streamBody("event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\"}}\n\n")))
	f.Add([]byte("data: {\"type\":\"content_block_delta\",\"index\":3,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}}\n\n"))
	f.Add([]byte("data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"n\",\"input\":{}}}\n\ndata: {\"type\":\"message_stop\"}\n\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		terminal := 0
		readStream(context.Background(), bytes.NewReader(body), "", "", func(ev llm.StreamEvent, err error) bool {
			if terminal > 0 {
				t.Fatalf("element after the terminal one: %+v %v", ev, err)
			}
			if err != nil || ev.Type == llm.StreamDone {
				terminal++
			}
			if ev.Type == llm.StreamToolCall && ev.ToolCall == nil {
				t.Fatal("tool_call event without a call")
			}
			return true
		})
		if terminal != 1 {
			t.Fatalf("%d terminal elements", terminal)
		}
	})
}
