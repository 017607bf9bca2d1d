package conformance_test

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/autoagent-go/autoagent/host"
	"github.com/autoagent-go/autoagent/tool"
)

// BenchmarkWordCount measures one word_count call through the autoagent
// host for each language: "fresh" is the host's default (a new isolated
// instance per call: from its pool, or a used one reset to the module's
// snapshot), "reuse" keeps one instance (Module.Reuse), "shared" is
// "fresh" with Module.SharedSeeds (the Go guest's runtime draws
// randomness as it starts: only with it does the Go guest get a snapshot,
// so instances reset to it). The module's size is reported as module-bytes, and the
// CPU time the process spent per call as cpu-ns/op: on a shared machine
// wall time mostly measures the other processes.
func BenchmarkWordCount(b *testing.B) {
	args := json.RawMessage(`{"text":"The quick brown fox jumps over the lazy dog.\nΓαζέες καὶ μυρτιὲς δὲν θὰ βρῶ πιὰ στὸ χρυσαφὶ ξέφωτο."}`)
	h := newHost(b, host.Options{})
	for _, lang := range languages {
		for _, mode := range []string{"fresh", "reuse", "shared"} {
			b.Run(lang+"/"+mode, func(b *testing.B) {
				fi, err := os.Stat(modulePath(b, lang))
				if err != nil {
					b.Fatal(err)
				}
				var l *host.Loaded
				if mode == "shared" {
					l = loadShared(b, h, lang)
				} else {
					l = loadHost(b, h, lang, mode == "reuse")
				}
				wc, _ := l.Tool("word_count")
				ctx := context.Background()
				b.ReportAllocs()
				cpu := processCPU()
				for b.Loop() {
					res, err := wc.Call(ctx, tool.Call{Name: "word_count", Arguments: args})
					if err != nil || res.IsError {
						b.Fatalf("%v %s", err, res.Text())
					}
				}
				reportCPU(b, cpu)
				b.ReportMetric(float64(fi.Size()), "module-bytes")
			})
		}
	}
}

// BenchmarkWordCountExtism makes the same call in the reference Extism host
// for Go (github.com/extism/go-sdk, one reused instance), as a yardstick
// for the autoagent host's overhead.
func BenchmarkWordCountExtism(b *testing.B) {
	input := []byte(`{"params":{"name":"word_count","arguments":{"text":"The quick brown fox jumps over the lazy dog.\nΓαζέες καὶ μυρτιὲς δὲν θὰ βρῶ πιὰ στὸ χρυσαφὶ ξέφωτο."}}}`)
	for _, lang := range languages {
		b.Run(lang, func(b *testing.B) {
			m := loadRaw(b, lang)
			b.ReportAllocs()
			cpu := processCPU()
			for b.Loop() {
				m.call(b, "call", input)
			}
			reportCPU(b, cpu)
		})
	}
}

// reportCPU reports the CPU time used since start per operation.
func reportCPU(b *testing.B, start time.Duration) {
	if used := processCPU() - start; used > 0 && b.N > 0 {
		b.ReportMetric(float64(used.Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
}

// loadShared loads lang's module with Module.SharedSeeds.
func loadShared(t testing.TB, h *host.Host, lang string) *host.Loaded {
	t.Helper()
	l, err := h.Load(context.Background(), host.Module{Name: "word_count_shared_" + lang, Bytes: readModule(t, lang), SharedSeeds: true})
	if err != nil {
		t.Fatalf("loading the %s module: %v", lang, err)
	}
	t.Cleanup(func() { l.Close(context.Background()) })
	return l
}
