package jsprogram_test

import (
	"context"
	"os"
	"testing"

	"github.com/autoagent-go/autoagent/codemode"
	"github.com/autoagent-go/autoagent/codemode/jsprogram"
	"github.com/autoagent-go/autoagent/host"
	"github.com/autoagent-go/autoagent/internal/enginetest"
	"github.com/autoagent-go/autoagent/synth"
	"github.com/autoagent-go/autoagent/tool"
)

// BenchmarkEngineCall splits a program's call into its parts, with a
// dispatcher that answers at once (no gate): 200 awaits of nothing, 200
// calls with an empty result, 200 calls with an object result; per await
// or call.
func BenchmarkEngineCall(b *testing.B) {
	ctx := context.Background()
	h, err := host.New(ctx, host.Options{CallTool: func(_ context.Context, c tool.Call) (tool.Result, error) {
		if c.Name == "obj" {
			return tool.Result{Content: []tool.Content{{Type: "text", Text: "{}"}}, StructuredContent: []byte(`{"id":7,"refund":70,"items":["a","b"]}`)}, nil
		}
		return tool.Text("ok"), nil
	}})
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close(ctx)
	r, err := jsprogram.New(ctx, h, jsprogram.Options{Engine: enginetest.Path(b, synth.BridgeEngineFile), Progress: os.Stderr})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close(ctx)
	for _, c := range []struct{ name, code string }{
		{"none", "return 1"},
		{"await", "for (let i = 0; i < 200; i++) await null; return 1"},
		{"text", "for (let i = 0; i < 200; i++) await tools.txt({id: i}); return 1"},
		{"object", "for (let i = 0; i < 200; i++) await tools.obj({id: i}); return 1"},
	} {
		b.Run(c.name, func(b *testing.B) {
			p := codemode.Program{Code: c.code, Tools: []string{"txt", "obj"}}
			c0 := cpuTime()
			for b.Loop() {
				res, err := r.Run(ctx, p)
				if err != nil || res.IsError {
					b.Fatal(err, res.Text())
				}
			}
			b.ReportMetric(float64(cpuTime()-c0)/float64(b.N)/1000, "cpu-µs/op")
		})
	}
}
