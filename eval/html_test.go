package eval_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/autoagent-go/autoagent/eval"
	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/loop"
)

// flakyReport runs three cases four times: A passes 4/4, B 3/4 (its
// second run answers "no" after a lookup), C 0/4.
func flakyReport(t *testing.T) *eval.Report {
	t.Helper()
	p := &answers{byCase: map[string][]string{
		"A": {"yes", "yes", "yes", "yes"},
		"B": {"yes", "no <b>bold</b>", "yes", "yes"},
		"C": {"no", "no", "no", "no"},
	}}
	newAgent := func(context.Context, *eval.Case, int) (*loop.Agent, error) { return &loop.Agent{Provider: p}, nil }
	rep, err := eval.RunK(context.Background(), newAgent, []eval.Case{yesCase("A"), yesCase("B"), yesCase("C")},
		eval.Options{K: 4, Tariff: func(u llm.Usage) float64 { return float64(u.InputTokens+u.OutputTokens) / 1e3 }})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// chromium returns the path of a headless-capable Chromium, skipping the
// test when there is none.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no chromium on PATH: `make deps` installs Debian's chromium, which renders the HTML report in this test")
	return ""
}

// headless runs Chromium on page with args and returns its stdout.
func headless(t *testing.T, bin, page string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	args = append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
		"--user-data-dir=" + t.TempDir(), "--virtual-time-budget=5000"}, args...)
	cmd := exec.CommandContext(ctx, bin, append(args, "file://"+page)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, stderr.String())
	}
	return stdout.Bytes()
}

// The report renders in a real browser: the page's script draws one point
// per k at the computed pass^k and a timeline per failing run, and the
// model's text is shown as text, not markup.
func TestHTMLReportInChromium(t *testing.T) {
	bin := chromium(t)
	rep := flakyReport(t)
	var page bytes.Buffer
	if err := eval.WriteHTML(&page, rep, eval.HTMLOptions{Title: "flaky suite", CostUnit: "USD"}); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(page.Bytes(), []byte("http://")) && !bytes.Contains(page.Bytes(), []byte(`"http://www.w3.org/2000/svg"`)) {
		t.Error("the page refers to something outside itself")
	}
	for _, ref := range []string{`src="http`, `href="http`, `@import`, `url(http`} {
		if bytes.Contains(page.Bytes(), []byte(ref)) {
			t.Errorf("the page loads an external asset (%s)", ref)
		}
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "report.html")
	if err := os.WriteFile(path, page.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	dom := string(headless(t, bin, path, "--dump-dom"))

	// The curve: pass^j = 7/12, 1/2, 5/12, 1/3 (see TestRunKStatistics).
	points := regexp.MustCompile(`<circle class="point"[^>]*data-k="(\d+)" data-value="([0-9.]+)"`).FindAllStringSubmatch(dom, -1)
	want := [][2]string{{"1", "0.5833"}, {"2", "0.5000"}, {"3", "0.4167"}, {"4", "0.3333"}}
	if len(points) != len(want) {
		t.Fatalf("the rendered chart has %d points, want %d:\n%s", len(points), len(want), dom)
	}
	for i, w := range want {
		if points[i][1] != w[0] || points[i][2] != w[1] {
			t.Errorf("point %d: k=%s value %s, want k=%s value %s", i, points[i][1], points[i][2], w[0], w[1])
		}
	}
	// The failing runs: B's run 2, and C's four.
	failures := regexp.MustCompile(`<section class="failure" data-case="([A-C])" data-run="(\d)">`).FindAllStringSubmatch(dom, -1)
	var got []string
	for _, f := range failures {
		got = append(got, f[1]+f[2])
	}
	if strings.Join(got, " ") != "B1 C0 C1 C2 C3" {
		t.Errorf("failing runs rendered: %v, want B1 C0 C1 C2 C3", got)
	}
	if n := strings.Count(dom, `<li class="step" data-step="1">`); n != 5 {
		t.Errorf("%d timelines with a first step, want 5 (one per failing run)", n)
	}
	if strings.Contains(dom, "No run failed.") {
		t.Error("the page still says no run failed")
	}
	if !strings.Contains(dom, `no &lt;b&gt;bold&lt;/b&gt;`) || strings.Contains(dom, "<b>bold</b>") {
		t.Error("the model's answer was rendered as markup, or not at all")
	}
	if !strings.Contains(dom, `<tr class="case" data-id="B" data-passes="3" data-runs="4">`) {
		t.Error("the cases table lacks B's 3 of 4")
	}
	if !strings.Contains(dom, `id="cost-per-success"`) {
		t.Error("no cost per success with a tariff")
	}

	// A screenshot, kept when AUTOAGENT_EVAL_SCREENSHOT names a file, for
	// a person to look at.
	if out := os.Getenv("AUTOAGENT_EVAL_SCREENSHOT"); out != "" {
		headless(t, bin, path, "--screenshot="+out, "--window-size=1200,1900", "--hide-scrollbars")
		if fi, err := os.Stat(out); err != nil || fi.Size() == 0 {
			t.Errorf("screenshot %s: %v", out, err)
		}
	}
}
