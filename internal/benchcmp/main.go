// Command benchcmp compares one package's benchmarks at another commit
// with the working tree, in the same run, on a machine whose speed drifts:
// it builds both test binaries, then runs them alternately, many short
// runs each, swapping which goes first every round, and reports per
// benchmark both medians, their ratio and a Mann-Whitney p-value.
//
//	go run ./internal/benchcmp -base fe5ec54 -pkg ./host \
//	    -bench '^Benchmark(CallWarm|CallFresh|CallPooled|Deadline)$' -rounds 30
//
// Both binaries run in the working tree's package directory, so test data
// (guest modules) are the same bytes for both: what differs is the code.
// -patch applies a diff to the base before building (for instance to give
// an old benchmark a fix its measurement needed).
//
// Why alternate short runs: on a shared 2-vCPU virtual machine the same
// binary's speed moves by ±20 % from one minute to the next, so two long
// runs one after the other compare the machine's moods, not the code.
// Runs of a fraction of a second, interleaved, put both binaries under the
// same drift; the median and a rank test are not moved by the outliers
// (see RATIONALE.md "How are benchmarks compared across commits?").
package main

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	var o options
	flag.StringVar(&o.base, "base", "", "the commit to compare with (required)")
	flag.StringVar(&o.pkg, "pkg", "./host", "the package whose benchmarks run")
	flag.StringVar(&o.bench, "bench", ".", "the benchmarks to run (go test -bench)")
	flag.IntVar(&o.rounds, "rounds", 30, "rounds: each runs both binaries once")
	flag.StringVar(&o.benchtime, "benchtime", "0.3s", "each run's -benchtime")
	flag.StringVar(&o.patch, "patch", "", "a diff applied to the base before it is built")
	flag.StringVar(&o.out, "out", "", "a directory to keep both binaries' raw output in")
	flag.Parse()
	if o.base == "" {
		fmt.Fprintln(os.Stderr, "benchcmp: -base COMMIT is required")
		flag.Usage()
		os.Exit(2)
	}
	// Interrupted, the run still removes its worktree of the base.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "benchcmp:", err)
		os.Exit(1)
	}
}

type options struct {
	base, pkg, bench, benchtime, patch, out string
	rounds                                  int
}

func run(ctx context.Context, o options, stdout, progress io.Writer) error {
	tmp, err := os.MkdirTemp("", "benchcmp-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	baseTree := filepath.Join(tmp, "base")
	if err := command(ctx, "", "git", "worktree", "add", "--detach", baseTree, o.base); err != nil {
		return fmt.Errorf("checking out %s: %w", o.base, err)
	}
	defer func() { _ = command(context.Background(), "", "git", "worktree", "remove", "--force", baseTree) }()
	if o.patch != "" {
		abs, err := filepath.Abs(o.patch)
		if err != nil {
			return err
		}
		if err := command(ctx, baseTree, "git", "apply", abs); err != nil {
			return fmt.Errorf("applying %s to %s: %w", o.patch, o.base, err)
		}
	}
	bins := [2]string{filepath.Join(tmp, "base.test"), filepath.Join(tmp, "head.test")}
	fmt.Fprintf(progress, "building %s at %s and in the working tree\n", o.pkg, o.base)
	if err := command(ctx, baseTree, "go", "test", "-c", "-o", bins[0], o.pkg); err != nil {
		return fmt.Errorf("building the base: %w", err)
	}
	if err := command(ctx, "", "go", "test", "-c", "-o", bins[1], o.pkg); err != nil {
		return fmt.Errorf("building the working tree: %w", err)
	}
	dir, err := filepath.Abs(o.pkg)
	if err != nil {
		return err
	}
	var raw [2]strings.Builder
	samples := [2]map[string][]float64{{}, {}}
	start := time.Now()
	for r := range o.rounds {
		order := []int{0, 1}
		if r%2 == 1 {
			order = []int{1, 0}
		}
		for _, k := range order {
			var out strings.Builder
			cmd := exec.CommandContext(ctx, bins[k], "-test.run", "^$", "-test.bench", o.bench, "-test.benchtime", o.benchtime)
			cmd.Dir, cmd.Stdout, cmd.Stderr = dir, &out, &out
			if err := cmd.Run(); err != nil {
				return fmt.Errorf("round %d, %s: %w\n%s", r+1, filepath.Base(bins[k]), err, out.String())
			}
			raw[k].WriteString(out.String())
			for name, v := range parse(out.String()) {
				samples[k][name] = append(samples[k][name], v...)
			}
		}
		fmt.Fprintf(progress, "round %d/%d (%s)\n", r+1, o.rounds, time.Since(start).Round(time.Second))
	}
	if o.out != "" {
		if err := os.MkdirAll(o.out, 0o755); err != nil {
			return err
		}
		for k, name := range []string{"base.txt", "head.txt"} {
			if err := os.WriteFile(filepath.Join(o.out, name), []byte(raw[k].String()), 0o644); err != nil {
				return err
			}
		}
	}
	rows := compare(samples[0], samples[1])
	if len(rows) == 0 {
		return errors.New("no benchmark ran in both binaries: check -bench")
	}
	fmt.Fprintf(stdout, "%s (base %s) against the working tree: %d rounds of -benchtime %s, alternating, in %s\n\n",
		o.pkg, o.base, o.rounds, o.benchtime, time.Since(start).Round(time.Second))
	writeTable(stdout, rows)
	return nil
}

// command runs name with args in dir, its output shown only on failure.
func command(ctx context.Context, dir, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, out)
	}
	return nil
}

// benchLine matches a result line of go test -bench: its name (without the
// GOMAXPROCS suffix) and ns/op.
var benchLine = regexp.MustCompile(`^(Benchmark\S+?)(?:-\d+)?\s+\d+\s+([0-9.]+) ns/op`)

// parse reads the ns/op of every result line in out, per benchmark.
func parse(out string) map[string][]float64 {
	got := map[string][]float64{}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		m := benchLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		v, err := strconv.ParseFloat(m[2], 64)
		if err != nil {
			continue
		}
		name := strings.TrimPrefix(m[1], "Benchmark")
		got[name] = append(got[name], v)
	}
	return got
}

// row is one benchmark's comparison.
type row struct {
	name       string
	base, head float64 // medians, ns/op
	n, m       int
	p          float64
}

// compare pairs the benchmarks both sides ran, in name order.
func compare(base, head map[string][]float64) []row {
	var rows []row
	for name, a := range base {
		b, ok := head[name]
		if !ok {
			continue
		}
		rows = append(rows, row{name: name, base: median(a), head: median(b), n: len(a), m: len(b), p: mannWhitney(a, b)})
	}
	slices.SortFunc(rows, func(x, y row) int { return cmp.Compare(x.name, y.name) })
	return rows
}

func writeTable(w io.Writer, rows []row) {
	fmt.Fprintf(w, "| benchmark | base ns/op | head ns/op | head/base | p | n |\n|---|---|---|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(w, "| %s | %.0f | %.0f | %+.1f %% | %.3f | %d/%d |\n",
			r.name, r.base, r.head, (r.head/r.base-1)*100, r.p, r.n, r.m)
	}
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	if n == 0 {
		return math.NaN()
	}
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// mannWhitney returns the two-sided p-value of the Mann-Whitney U test of
// a against b, by the normal approximation with the correction for ties
// (sound from about 8 samples a side; benchcmp takes tens).
func mannWhitney(a, b []float64) float64 {
	n1, n2 := float64(len(a)), float64(len(b))
	if n1 == 0 || n2 == 0 {
		return math.NaN()
	}
	type obs struct {
		v     float64
		fromA bool
	}
	all := make([]obs, 0, len(a)+len(b))
	for _, v := range a {
		all = append(all, obs{v, true})
	}
	for _, v := range b {
		all = append(all, obs{v, false})
	}
	slices.SortFunc(all, func(x, y obs) int { return cmp.Compare(x.v, y.v) })
	var rankA, ties float64
	for i := 0; i < len(all); {
		j := i
		for j < len(all) && all[j].v == all[i].v {
			j++
		}
		rank := float64(i+j+1) / 2 // the mean of ranks i+1 … j
		t := float64(j - i)
		ties += t*t*t - t
		for k := i; k < j; k++ {
			if all[k].fromA {
				rankA += rank
			}
		}
		i = j
	}
	u := rankA - n1*(n1+1)/2
	mean := n1 * n2 / 2
	n := n1 + n2
	variance := n1 * n2 / 12 * (n + 1 - ties/(n*(n-1)))
	if variance <= 0 {
		return 1
	}
	z := (u - mean) / math.Sqrt(variance)
	return math.Erfc(math.Abs(z) / math.Sqrt2)
}
