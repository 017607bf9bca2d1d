package openai_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/autoagent-go/autoagent/internal/fixturetest"
	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/providers/openai"
)

// memTransport answers every request with the same body from memory, so
// the benchmark measures parsing and assembly, not the loopback network.
type memTransport struct {
	body string
}

func (m memTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	io.Copy(io.Discard, r.Body)
	r.Body.Close()
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}},
		Body: io.NopCloser(strings.NewReader(m.body)), Request: r}, nil
}

// BenchmarkStreamParse streams the recorded gpt-4o multi-tool answer
// (parallel calls, argument fragments) and the recorded DeepSeek reasoning
// answer through the adapter, and reports events/s and MB/s of SSE input.
func BenchmarkStreamParse(b *testing.B) {
	cases := []struct {
		name string
		body func(b *testing.B) string
	}{
		{"openai-multi-tool", func(b *testing.B) string {
			return fixturetest.Cassette(b, "fantasy/TestOpenAICommon/openai-gpt-4o/multi_tool_streaming.yaml")[0].Answer.Body
		}},
		{"deepseek-reasoning", func(b *testing.B) string {
			return chunksAsSSE(b, "vercel-ai/deepseek_src_chat___fixtures___deepseek-reasoning.chunks.txt")
		}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			body := c.body(b)
			events := strings.Count(body, "data: ")
			p, err := openai.New(openai.Options{BaseURL: "http://bench.invalid/v1", APIKey: "k", Model: "m",
				HTTPClient: &http.Client{Transport: memTransport{body: body}}})
			if err != nil {
				b.Fatal(err)
			}
			req := &llm.Request{Messages: []llm.Message{llm.UserText("x")}}
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				var done bool
				for ev, err := range p.Stream(context.Background(), req) {
					if err != nil {
						b.Fatal(err)
					}
					done = done || ev.Type == llm.StreamDone
				}
				if !done {
					b.Fatal("no done event")
				}
			}
			b.ReportMetric(float64(events)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
		})
	}
}
