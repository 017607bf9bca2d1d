package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// evalReport is the --json report, as a consumer reads it.
type evalReport struct {
	K                int        `json:"k"`
	Runs             int        `json:"runs"`
	PassAt1          float64    `json:"pass_at_1"`
	PassHatK         float64    `json:"pass_hat_k"`
	PassAtK          float64    `json:"pass_at_k"`
	TokensPerSuccess *float64   `json:"tokens_per_success"`
	CostPerSuccess   *float64   `json:"cost_per_success"`
	PassHatCurve     []float64  `json:"pass_hat_curve"`
	Cases            []evalCase `json:"cases"`
}

type evalCase struct {
	ID       string `json:"id"`
	Passes   int    `json:"passes"`
	Runs     int    `json:"runs"`
	Tokens   *int64 `json:"tokens"`
	Failures []struct {
		Run      int    `json:"run"`
		Reason   string `json:"reason"`
		Timeline []struct {
			Calls []struct {
				Name string `json:"name"`
			} `json:"calls"`
		} `json:"timeline"`
	} `json:"failures"`
}

// exampleSuite sets up examples/eval: the text_tools module approved with
// no capabilities in the test's plugins directory.
func exampleSuite(t *testing.T) (*cliEnv, string) {
	t.Helper()
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	e := newCLIEnv(t)
	b, err := os.ReadFile(filepath.Join(repo, "plugins", "text_tools.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	mod := filepath.Join(e.plugins, "text_tools.wasm")
	if err := os.WriteFile(mod, b, 0o644); err != nil {
		t.Fatal(err)
	}
	e.mustRun(0, "tools", "approve", mod, "--yes")
	return e, filepath.Join(repo, "examples", "eval", "cases.jsonl")
}

func nearly(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// The example suite's figures, computed by hand from its scripts:
// q4-growth passes 3 of 4 (run 4 guesses), vat 4/4, order-city 2/4 (runs
// 2 and 4 query the wrong field), refuse-delete 4/4.
func TestEvalExampleSuite(t *testing.T) {
	e, cases := exampleSuite(t)
	html := filepath.Join(e.root, "report.html")
	r := e.mustRun(0, "eval", cases, "--provider", "scripted", "--k", "4", "--concurrency", "3", "--json",
		"--tariff", "3,15", "--html", html)
	var rep evalReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("--json: %v\n%s", err, r.stdout)
	}
	if rep.K != 4 || rep.Runs != 16 || !nearly(rep.PassAt1, 13.0/16) || rep.PassHatK != 0.5 || rep.PassAtK != 1 {
		t.Errorf("k %d runs %d pass@1 %v pass^4 %v pass@4 %v; want 4, 16, 13/16, 1/2, 1", rep.K, rep.Runs, rep.PassAt1, rep.PassHatK, rep.PassAtK)
	}
	// Tokens: q4-growth 3×(320+352)+311, vat 4×(298+334), order-city
	// 2×(340+352)+2×(340+349), refuse-delete 4×275: 8717 over 13 passes.
	if rep.TokensPerSuccess == nil || !nearly(*rep.TokensPerSuccess, 8717.0/13) {
		t.Errorf("tokens per success %v, want 8717/13", rep.TokensPerSuccess)
	}
	// 8296 input and 421 output tokens at 3 and 15 per million.
	if rep.CostPerSuccess == nil || !nearly(*rep.CostPerSuccess, (8296*3+421*15)/1e6/13) {
		t.Errorf("cost per success %v", rep.CostPerSuccess)
	}
	// pass^j: q4-growth C(3,j)/C(4,j) = 3/4, 1/2, 1/4, 0; order-city
	// C(2,j)/C(4,j) = 1/2, 1/6, 0, 0; the other two 1.
	want := []float64{3.25 / 4, (2.5 + 1.0/6) / 4, 2.25 / 4, 0.5}
	for j, w := range want {
		if j >= len(rep.PassHatCurve) || !nearly(rep.PassHatCurve[j], w) {
			t.Errorf("pass^%d = %v, want %v", j+1, rep.PassHatCurve, w)
		}
	}
	wantCases := []struct {
		id       string
		passes   int
		tokens   int64
		failures []int
	}{{"q4-growth", 3, 2327, []int{3}}, {"vat", 4, 2528, nil}, {"order-city", 2, 2762, []int{1, 3}}, {"refuse-delete", 4, 1100, nil}}
	if len(rep.Cases) != len(wantCases) {
		t.Fatalf("%d cases", len(rep.Cases))
	}
	for i, w := range wantCases {
		c := rep.Cases[i]
		var runs []int
		for _, f := range c.Failures {
			runs = append(runs, f.Run)
		}
		if c.ID != w.id || c.Passes != w.passes || c.Runs != 4 || c.Tokens == nil || *c.Tokens != w.tokens || !slices.Equal(runs, w.failures) {
			t.Errorf("case %d: %s %d/%d tokens %v failures %v; want %+v", i, c.ID, c.Passes, c.Runs, c.Tokens, runs, w)
		}
	}
	// The failing order-city run's timeline shows the tool call it made.
	if f := rep.Cases[2].Failures; len(f) == 0 || len(f[0].Timeline) != 2 || len(f[0].Timeline[0].Calls) != 1 || f[0].Timeline[0].Calls[0].Name != "json_query" ||
		f[0].Reason != `output "7", want "Oslo"` {
		t.Errorf("order-city's failure: %+v", f)
	}
	page, err := os.ReadFile(html)
	if err != nil || !strings.Contains(string(page), `"pass_hat_curve":[0.8125,`) {
		t.Errorf("--html: %v, %d bytes", err, len(page))
	}

	// The table: one row per case, then the figures.
	r = e.mustRun(0, "eval", cases, "--provider", "scripted", "--k", "4")
	for _, s := range []string{"order-city     2/4     2762", "pass@1 0.812  pass^4 0.500  pass@4 1.000", "order-city run 2: output \"7\", want \"Oslo\""} {
		if !strings.Contains(r.stdout, s) {
			t.Errorf("the table lacks %q:\n%s", s, r.stdout)
		}
	}
}

// --min-pass-hat-k fails the suite below the threshold, for CI; at or
// above it the suite passes.
func TestEvalMinPassHatK(t *testing.T) {
	e, cases := exampleSuite(t)
	r := e.mustRun(1, "eval", cases, "--provider", "scripted", "--k", "4", "--min-pass-hat-k", "0.6")
	if !strings.Contains(r.stderr, "pass^4 is 0.500, below --min-pass-hat-k 0.6") || !strings.Contains(r.stdout, "pass^4 0.500") {
		t.Errorf("below the threshold:\nstdout %s\nstderr %s", r.stdout, r.stderr)
	}
	e.mustRun(0, "eval", cases, "--provider", "scripted", "--k", "4", "--min-pass-hat-k", "0.5")
}

// Usage errors exit 2 and say what to do; a bad case file names its line.
func TestEvalUsageErrors(t *testing.T) {
	e := newCLIEnv(t)
	bad := filepath.Join(e.root, "bad.jsonl")
	if err := os.WriteFile(bad, []byte("{\"id\":\"a\",\"prompt\":\"p\"}\n{\"id\":\"b\",\"prompt\":\"p\",\"expect\":{\"outptu_equals\":\"x\"}}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	good := filepath.Join(e.root, "good.jsonl")
	if err := os.WriteFile(good, []byte(`{"id":"a","prompt":"p"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"eval", bad, "--provider", "scripted", "--script", good}, `bad.jsonl:2: unknown field "outptu_equals"`},
		{[]string{"eval"}, "give a case file"},
		{[]string{"eval", good, "--k", "0"}, "--k must be 1 or more"},
		{[]string{"eval", good, "--min-pass-hat-k", "2"}, "between 0 and 1"},
		{[]string{"eval", good, "--tariff", "3"}, "want IN,OUT"},
		{[]string{"eval", good, "--record", "x.jsonl"}, "--record is not for eval"},
		{[]string{"eval", good, "--provider", "scripted"}, `case "a" has no "scripts": give --script FILE`},
	} {
		r := e.run("", tt.args...)
		if r.code != 2 || !strings.Contains(r.stderr, tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tt.args, r.code, r.stderr, tt.want)
		}
	}
	// A case file that is not there is a failure, not a usage error.
	if r := e.run("", "eval", filepath.Join(e.root, "missing.jsonl")); r.code != 1 || !strings.Contains(r.stderr, "missing.jsonl") {
		t.Errorf("missing case file: exit %d, %q", r.code, r.stderr)
	}
}

// A run recorded with run --record becomes a case that replays offline:
// no provider is named, no tool runs, and it passes every time.
func TestEvalFromRecording(t *testing.T) {
	e, cases := exampleSuite(t)
	script := filepath.Join(filepath.Dir(cases), "scripts", "vat.jsonl")
	rec := filepath.Join(e.root, "vat-run.jsonl")
	e.mustRun(0, "run", "--provider", "scripted", "--script", script, "--record", rec, "What is 19% VAT on 8750 EUR?")
	// A plugins directory that does not exist: replays build no runtime.
	r := e.mustRun(0, "eval", "--from-recording", rec, "--k", "3", "--json", "--plugins", filepath.Join(e.root, "none"))
	var rep evalReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	if len(rep.Cases) != 1 || rep.Cases[0].ID != "vat-run" || rep.Cases[0].Passes != 3 || rep.PassHatK != 1 || rep.TokensPerSuccess == nil || *rep.TokensPerSuccess != 632 {
		t.Errorf("report %+v", rep)
	}
}
