package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	out := `goos: linux
BenchmarkCallFresh/Go-2         	     100	   1753234 ns/op	  250000 B/op	    6548 allocs/op
BenchmarkCallFresh/Go-2         	     120	   1650000.5 ns/op
BenchmarkDeadline/Calls/Interrupt   	    2000	    472300 ns/op	   9.77 kB/s
--- FAIL: BenchmarkBroken
PASS
`
	got := parse(out)
	if v := got["CallFresh/Go"]; len(v) != 2 || v[0] != 1753234 || v[1] != 1650000.5 {
		t.Errorf("CallFresh/Go = %v", v)
	}
	if v := got["Deadline/Calls/Interrupt"]; len(v) != 1 || v[0] != 472300 {
		t.Errorf("Deadline/Calls/Interrupt (no GOMAXPROCS suffix) = %v", v)
	}
	if len(got) != 2 {
		t.Errorf("parsed %d benchmarks, want 2: %v", len(got), got)
	}
}

func TestMedian(t *testing.T) {
	if m := median([]float64{5, 1, 3}); m != 3 {
		t.Errorf("odd: %v", m)
	}
	if m := median([]float64{4, 1, 3, 10}); m != 3.5 {
		t.Errorf("even: %v", m)
	}
}

// The expected p-values are the normal approximation without continuity
// correction, worked by hand (and as scipy.stats.mannwhitneyu with
// method="asymptotic", use_continuity=False reports them).
func TestMannWhitney(t *testing.T) {
	var lo, hi []float64
	for i := range 10 {
		lo = append(lo, float64(i))
		hi = append(hi, float64(100+i))
	}
	// U = 0, z = -50/sqrt(175) = -3.7796.
	if p := mannWhitney(lo, hi); math.Abs(p-1.5705e-4) > 2e-6 {
		t.Errorf("separated samples: p = %v, want 0.00015705", p)
	}
	if p := mannWhitney(hi, lo); math.Abs(p-1.5705e-4) > 2e-6 {
		t.Errorf("the test is two-sided: p = %v", p)
	}
	// Ties: ranks 1 2 3.5 5.5 7.5 for a, U = 4.5, variance 22.5.
	a := []float64{1, 2, 3, 4, 5}
	b := []float64{3, 4, 5, 6, 7}
	if p := mannWhitney(a, b); math.Abs(p-0.09168) > 2e-4 {
		t.Errorf("with ties: p = %v, want 0.0917", p)
	}
	if p := mannWhitney([]float64{2, 2, 2}, []float64{2, 2, 2}); p != 1 {
		t.Errorf("identical samples: p = %v, want 1", p)
	}
}

func TestCompareKeepsOnlyBenchmarksBothRan(t *testing.T) {
	rows := compare(
		map[string][]float64{"B": {2, 2}, "A": {1, 1, 1}, "OnlyBase": {1}},
		map[string][]float64{"A": {2, 2, 2}, "B": {1, 1}, "OnlyHead": {1}},
	)
	if len(rows) != 2 || rows[0].name != "A" || rows[1].name != "B" {
		t.Fatalf("rows = %+v", rows)
	}
	if rows[0].base != 1 || rows[0].head != 2 || rows[0].n != 3 || rows[0].m != 3 {
		t.Errorf("A = %+v", rows[0])
	}
}

// TestRunFindsASlowerWorkingTree builds a throwaway module's benchmark at
// a commit and in its working tree, where the benchmark reports 20 times
// the ns/op, and checks the report says so. It asserts on no timing: the
// benchmark reports its figure itself.
func TestRunFindsASlowerWorkingTree(t *testing.T) {
	if testing.Short() {
		t.Skip("builds two test binaries")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	// The benchmark reports its own ns/op (ReportMetric replaces the
	// measured one): the comparison is exercised end to end (two builds,
	// alternating rounds, the report, the test of difference) on numbers
	// no load on the machine can change.
	bench := func(ns int) string {
		return fmt.Sprintf("package w\n\nimport \"testing\"\n\nfunc BenchmarkWork(b *testing.B) {\n\tfor b.Loop() {\n\t}\n\tb.ReportMetric(%d, \"ns/op\")\n}\n", ns)
	}
	write("go.mod", "module w\n\ngo 1.24\n")
	write("w_test.go", bench(1000))
	git("init", "-q")
	git("add", ".")
	git("commit", "-q", "-m", "base")
	write("w_test.go", bench(20000))
	t.Chdir(dir)
	var out strings.Builder
	o := options{base: "HEAD", pkg: ".", bench: ".", rounds: 8, benchtime: "10x"}
	if err := run(context.Background(), o, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	report := out.String()
	var line string
	for l := range strings.Lines(report) {
		if strings.HasPrefix(l, "| Work |") {
			line = l
		}
	}
	if line == "" {
		t.Fatalf("no row for Work:\n%s", report)
	}
	f := strings.Split(line, "|")
	ratio := strings.TrimSpace(f[4])
	if !strings.HasPrefix(ratio, "+") {
		t.Errorf("the working tree reports 20x the time, the report says %s:\n%s", ratio, report)
	}
	// 8 against 8, fully separated: U = 0, p = 0.0002.
	if p, err := strconv.ParseFloat(strings.TrimSpace(f[5]), 64); err != nil || p >= 0.001 {
		t.Errorf("p = %s, want under 0.01 (head runs slower):\n%s", f[5], report)
	}
}
