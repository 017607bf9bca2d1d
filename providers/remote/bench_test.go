package remote

import (
	"context"
	"strings"
	"testing"

	"github.com/autoagent-go/autoagent/llm"
)

// BenchmarkComplete measures what serving a provider through go-plugin
// adds to one call: the same fake provider in process and in a backend
// subprocess (gRPC over a Unix socket with mutual TLS, JSON codec).
func BenchmarkComplete(b *testing.B) {
	for _, size := range []struct {
		name string
		req  *llm.Request
	}{
		{"small", ask("hello")},
		{"64KiB", ask(strings.Repeat("x", 64<<10))},
	} {
		b.Run("in-process/"+size.name, func(b *testing.B) {
			var p llm.Provider = &fake{}
			benchComplete(b, p, size.req)
		})
		b.Run("go-plugin/"+size.name, func(b *testing.B) {
			p, _ := startFake(b, Options{})
			benchComplete(b, p, size.req)
		})
	}
}

func benchComplete(b *testing.B, p llm.Provider, req *llm.Request) {
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.Complete(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStream measures a whole streamed answer (two text deltas, a
// tool call and done: four messages from the backend).
func BenchmarkStream(b *testing.B) {
	run := func(b *testing.B, p llm.Provider) {
		ctx := context.Background()
		req := ask("hello")
		b.ReportAllocs()
		for b.Loop() {
			for _, err := range p.Stream(ctx, req) {
				if err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	b.Run("in-process", func(b *testing.B) { run(b, &fake{}) })
	b.Run("go-plugin", func(b *testing.B) {
		p, _ := startFake(b, Options{})
		run(b, p)
	})
}
