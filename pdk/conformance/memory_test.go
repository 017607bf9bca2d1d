package conformance_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/autoagent-go/autoagent/host"
	"github.com/autoagent-go/autoagent/tool"
)

// TestGuestMemoryStaysFlat calls one long-lived instance of each
// language's module many times with 128 KiB of text, as an Extism host
// that keeps instances does (the autoagent host does with Module.Reuse):
// WebAssembly memory never shrinks, so anything a call keeps, or garbage
// left to pile up between calls, shows as growth from call to call. After
// a warm-up the instance's memory must stop growing. The Go PDK collects
// after a call that moved much; the AssemblyScript PDK, whose runtime
// collects only when asked, after every call (Call.end).
func TestGuestMemoryStaysFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("many calls with large inputs: skipped in -short mode")
	}
	for _, lang := range languages {
		t.Run(lang, func(t *testing.T) {
			var mu sync.Mutex
			var peaks []int64
			var fresh int // calls not served by a kept instance
			h := newHost(t, host.Options{OnCall: func(_ context.Context, r host.CallRecord) {
				mu.Lock()
				peaks = append(peaks, r.MemoryPeak)
				if !r.Pooled {
					fresh++
				}
				mu.Unlock()
			}})
			wc, _ := loadHost(t, h, lang, true).Tool("word_count")
			const n = 128 << 10 / 18 // lines of 3 words and 18 characters
			args, _ := json.Marshal(map[string]string{"text": strings.Repeat("lorem ipsum dolor\n", n)})
			want := fmt.Sprintf(`{"words":%d,"lines":%d,"chars":%d}`, 3*n, n, 18*n)
			const calls, warmup = 48, 24
			for i := range calls {
				res, err := wc.Call(context.Background(), tool.Call{Name: "word_count", Arguments: args})
				if err != nil || res.IsError || res.Text() != want {
					t.Fatalf("call %d: %v %.200s, want %s", i, err, res.Text(), want)
				}
			}
			if len(peaks) != calls {
				t.Fatalf("%d call records, want %d", len(peaks), calls)
			}
			if fresh > 1 {
				t.Fatalf("%d of %d calls had an instance of their own: the instance was not kept", fresh, calls)
			}
			if peaks[calls-1] > peaks[warmup-1] {
				t.Errorf("memory grew from %d bytes after call %d to %d after call %d (all: %v)", peaks[warmup-1], warmup, peaks[calls-1], calls, peaks)
			}
			t.Logf("memory: %d bytes after call 1, %d after call %d, %d after call %d", peaks[0], peaks[warmup-1], warmup, peaks[calls-1], calls)
		})
	}
}
