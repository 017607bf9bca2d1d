package sse

import (
	"strings"
	"testing"
)

// BenchmarkRead measures the parser alone on an OpenAI-style stream of
// 1000 chunk events.
func BenchmarkRead(b *testing.B) {
	ev := `data: {"id":"chatcmpl-x","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[{"index":0,"delta":{"content":" token"},"finish_reason":null}],"usage":null,"obfuscation":"abcdef"}` + "\n\n"
	body := strings.Repeat(ev, 1000)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		for _, err := range Read(strings.NewReader(body)) {
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
		if n != 1000 {
			b.Fatalf("got %d events", n)
		}
	}
	b.ReportMetric(1000*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}
