package gemini

import (
	"bytes"
	"context"
	"testing"

	"github.com/autoagent-go/autoagent/internal/fixturetest"
	"github.com/autoagent-go/autoagent/llm"
)

// benchStream measures how fast a stream body is turned into events: SSE
// framing, JSON decoding and assembly, without the network.
func benchStream(b *testing.B, body []byte) {
	events := bytes.Count(body, []byte("data: "))
	ctx := context.Background()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		done := false
		readStream(ctx, bytes.NewReader(body), "m", "", func(ev llm.StreamEvent, err error) bool {
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

// BenchmarkStreamParse replays the recorded multi-tool answer: three text
// chunks with usage.
func BenchmarkStreamParse(b *testing.B) {
	benchStream(b, []byte(fixturetest.Cassette(b, "fantasy/TestGoogleCommon/gemini-2.5-flash/multi_tool_streaming.yaml")[1].Answer.Body))
}

// BenchmarkStreamParsePartialArgs replays the recorded Gemini 3 stream whose
// call arguments arrive as partialArgs.
func BenchmarkStreamParsePartialArgs(b *testing.B) {
	benchStream(b, []byte(geminiSSE(fixturetest.Chunks(b, partialArgsFile))))
}
