package anthropic

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/autoagent-go/autoagent/internal/fixturetest"
	"github.com/autoagent-go/autoagent/llm"
)

// BenchmarkStreamParse measures how fast a recorded stream (thinking
// deltas, a signature, a tool call's JSON fragments, usage) is turned into
// events: SSE framing, JSON decoding and assembly, without the network.
func BenchmarkStreamParse(b *testing.B) {
	body := []byte(fixturetest.Cassette(b, "fantasy/TestAnthropicThinking/claude-sonnet-4/thinking-streaming.yaml")[0].Answer.Body)
	events := strings.Count(string(body), "\ndata: ") + 1
	ctx := context.Background()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		done := false
		readStream(ctx, bytes.NewReader(body), "", "", func(ev llm.StreamEvent, err error) bool {
			if err != nil {
				b.Fatal(err)
			}
			done = done || ev.Type == llm.StreamDone
			return true
		})
		if !done {
			b.Fatal("no done event")
		}
	}
	b.ReportMetric(float64(events)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}
