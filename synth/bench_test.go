package synth

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/autoagent-go/autoagent/host"
	"github.com/autoagent-go/autoagent/providers/scripted"
	"github.com/autoagent-go/autoagent/tool"
)

// The benchmark scripts; synth/jsengine's BenchmarkNative runs the same
// JavaScript in goja outside the sandbox, for the ratio.
const (
	benchTrivialJS = `function run(a) { return { n: a.n + 1 } }`
	benchTextJS    = `function run(a) {
  const counts = {};
  for (const w of a.text.split(/\s+/)) if (w) counts[w] = (counts[w] || 0) + 1;
  return { distinct: Object.keys(counts).length };
}`
	benchTrivialGo = "package main\n\nfunc run(args map[string]any) (any, error) {\n\tn, _ := args[\"n\"].(float64)\n\treturn map[string]any{\"n\": n + 1}, nil\n}\n"
	benchTextGo    = "package main\n\nimport \"strings\"\n\nfunc run(args map[string]any) (any, error) {\n\ttext, _ := args[\"text\"].(string)\n\tcounts := map[string]int{}\n\tfor _, w := range strings.Fields(text) {\n\t\tcounts[w]++\n\t}\n\treturn map[string]any{\"distinct\": len(counts)}, nil\n}\n"
)

// benchText is about 100 KB of words, 1000 distinct.
func benchText() string {
	var s strings.Builder
	for i := 0; s.Len() < 100<<10; i++ {
		s.WriteString("w")
		s.WriteString(strings.Repeat("x", i%7))
		s.WriteString(string(rune('a' + i%26)))
		s.WriteString(string(rune('a' + (i/26)%40%26)))
		s.WriteString(" ")
	}
	return s.String()
}

func benchTool(b *testing.B, lang, src string) *Tool {
	b.Helper()
	bl := newBuilder(b, scripted.New(turn(draft{Name: "bench", Source: src})), func(o *Options) {
		o.Language, o.NoStaging = lang, true
	})
	t, err := bl.Build(context.Background(), Request{Capability: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	return t
}

func benchCalls(b *testing.B, t *Tool, args json.RawMessage) {
	ctx := context.Background()
	b.SetBytes(int64(len(args)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := t.Call(ctx, tool.Call{Name: "bench", Arguments: args})
		if err != nil || res.IsError {
			b.Fatalf("%s %v", res.Text(), err)
		}
	}
}

// BenchmarkToolCall is one call of a generated tool through the host,
// each in a fresh instance (from the host's pool when it keeps up).
func BenchmarkToolCall(b *testing.B) {
	text, _ := json.Marshal(map[string]string{"text": benchText()})
	for _, c := range []struct {
		name, lang, src string
		args            json.RawMessage
	}{
		{"js/trivial", "js", benchTrivialJS, json.RawMessage(`{"n":1}`)},
		{"js/text100KB", "js", benchTextJS, text},
		{"go/trivial", "go", benchTrivialGo, json.RawMessage(`{"n":1}`)},
		{"go/text100KB", "go", benchTextGo, text},
	} {
		b.Run(c.name, func(b *testing.B) { benchCalls(b, benchTool(b, c.lang, c.src), c.args) })
	}
}

// BenchmarkToolCallFresh is one call of a generated JavaScript tool in a
// fresh engine instance made on the call's path (no pool), as a call finds
// it when the pool has not kept up: the engine's start (from the host's
// snapshot) and the call. cpu-µs/op is the process's CPU time per call
// (every goroutine's), which a loaded machine stretches far less than
// wall time.
func BenchmarkToolCallFresh(b *testing.B) {
	ctx := context.Background()
	h, err := host.New(ctx, host.Options{PoolSize: -1})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = h.Close(ctx) })
	bl := newBuilder(b, scripted.New(turn(draft{Name: "bench", Source: benchTrivialJS})), func(o *Options) {
		o.Language, o.NoStaging, o.Host = "js", true, h
	})
	t, err := bl.Build(ctx, Request{Capability: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	c0 := cpuTime()
	benchCalls(b, t, json.RawMessage(`{"n":1}`))
	b.ReportMetric(float64(cpuTime()-c0)/float64(b.N)/1000, "cpu-µs/op")
}

// BenchmarkToolCallSpaced is a call made after the host's pool has had
// time to prepare an instance, as in an agent run, where model turns
// separate tool calls: it measures the call itself, not instantiation.
func BenchmarkToolCallSpaced(b *testing.B) {
	for _, c := range []struct{ name, lang, src string }{
		{"js/trivial", "js", benchTrivialJS},
		{"go/trivial", "go", benchTrivialGo},
	} {
		b.Run(c.name, func(b *testing.B) {
			t := benchTool(b, c.lang, c.src)
			ctx := context.Background()
			args := json.RawMessage(`{"n":1}`)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				time.Sleep(300 * time.Millisecond)
				b.StartTimer()
				res, err := t.Call(ctx, tool.Call{Name: "bench", Arguments: args})
				if err != nil || res.IsError {
					b.Fatalf("%s %v", res.Text(), err)
				}
			}
		})
	}
}

// BenchmarkEngineLoad is loading the JavaScript engine in a new host:
// compiling it to machine code (cold, no disk cache), or reading the
// compiled code from the disk cache (as a new process does).
func BenchmarkEngineLoad(b *testing.B) {
	path, err := FindEngine(EngineFile)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	cache := b.TempDir()
	for _, c := range []struct {
		name string
		opts host.Options
	}{
		{"cold", host.Options{NoDiskCache: true, PoolSize: -1}},
		{"cache_hit", host.Options{CacheDir: cache, PoolSize: -1}},
	} {
		b.Run(c.name, func(b *testing.B) {
			if c.name == "cache_hit" {
				warmInto(b, c.opts, path)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				h, err := host.New(ctx, c.opts)
				if err != nil {
					b.Fatal(err)
				}
				l, err := WarmEngine(ctx, h, path, nil)
				if err != nil {
					b.Fatal(err)
				}
				_ = l.Close(ctx)
				_ = h.Close(ctx)
			}
		})
	}
}

func warmInto(b *testing.B, opts host.Options, path string) {
	ctx := context.Background()
	h, err := host.New(ctx, opts)
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close(ctx)
	l, err := WarmEngine(ctx, h, path, os.Stderr)
	if err != nil {
		b.Fatal(err)
	}
	_ = l.Close(ctx)
}
