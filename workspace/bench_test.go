package workspace_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/autoagent-go/autoagent/workspace"
)

// BenchmarkWrite4KiB is a 4 KiB write with its journal entry, in the
// default configuration (safe against the process's death); compare
// BenchmarkOSWriteFile4KiB, run beside it.
func BenchmarkWrite4KiB(b *testing.B) { benchWrite(b, workspace.Options{}) }

// BenchmarkWrite4KiBSync is the same with Options.Sync (durable against
// a power loss: four fsyncs).
func BenchmarkWrite4KiBSync(b *testing.B) { benchWrite(b, workspace.Options{Sync: true}) }

func benchWrite(b *testing.B, opts workspace.Options) {
	w, err := workspace.Open(b.TempDir(), opts)
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	data := make([]byte, 4096)
	ctx := context.Background()
	b.SetBytes(4096)
	i := 0
	for b.Loop() {
		data[i%4096]++
		i++
		if _, err := w.Write(ctx, "f.md", data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOSWriteFile4KiB is the baseline: os.WriteFile of 4 KiB over
// the same file, unsynced.
func BenchmarkOSWriteFile4KiB(b *testing.B) {
	p := filepath.Join(b.TempDir(), "f.md")
	data := make([]byte, 4096)
	b.SetBytes(4096)
	i := 0
	for b.Loop() {
		data[i%4096]++
		i++
		if err := os.WriteFile(p, data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWrite4KiBPaired alternates a journaled 4 KiB write with an
// os.WriteFile of 4 KiB, timing each, so both see the same load of a
// shared machine; it reports their medians and the ratio of the medians,
// for the default options and for Options.Sync.
func BenchmarkWrite4KiBPaired(b *testing.B) {
	b.Run("default", func(b *testing.B) { paired(b, workspace.Options{}) })
	b.Run("sync", func(b *testing.B) { paired(b, workspace.Options{Sync: true}) })
}

func paired(b *testing.B, opts workspace.Options) {
	dir := b.TempDir()
	w, err := workspace.Open(dir, opts)
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	plain := filepath.Join(b.TempDir(), "f.md")
	data := make([]byte, 4096)
	ctx := context.Background()
	var ws, plainT []time.Duration
	i := 0
	for b.Loop() {
		data[i%4096]++
		i++
		t0 := time.Now()
		if _, err := w.Write(ctx, "f.md", data); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if err := os.WriteFile(plain, data, 0o644); err != nil {
			b.Fatal(err)
		}
		ws, plainT = append(ws, t1.Sub(t0)), append(plainT, time.Since(t1))
	}
	mw, mo := median(ws), median(plainT)
	b.ReportMetric(float64(mw.Nanoseconds()), "ws-p50-ns")
	b.ReportMetric(float64(mo.Nanoseconds()), "os-p50-ns")
	b.ReportMetric(float64(mw)/float64(mo), "ratio-p50")
}

func median(ds []time.Duration) time.Duration {
	slices.Sort(ds)
	return ds[len(ds)/2]
}

// BenchmarkRollbackRun1000 rolls back a run of 1 000 changes to 50 files.
func BenchmarkRollbackRun1000(b *testing.B) {
	ctx := runCtx("r1")
	for b.Loop() {
		b.StopTimer()
		w, err := workspace.Open(b.TempDir(), workspace.Options{})
		if err != nil {
			b.Fatal(err)
		}
		for i := range 1000 {
			if _, err := w.Write(ctx, filepath.Join("d", string(rune('a'+i%50))+".md"), []byte{byte(i), byte(i >> 8)}); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		if _, err := w.RollbackRun(context.Background(), "r1"); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		w.Close()
		b.StartTimer()
	}
}
