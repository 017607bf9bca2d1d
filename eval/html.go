package eval

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"time"
)

// HTMLOptions configures WriteHTML. The zero value works.
type HTMLOptions struct {
	// Title heads the page ("autoagent eval" when empty).
	Title string
	// CostUnit names the tariff's currency in the page ("" prints the
	// figure bare).
	CostUnit string
	// Generated is the time printed on the page (now when zero).
	Generated time.Time
}

//go:embed report.html.tmpl
var reportTemplate string

var reportPage = template.Must(template.New("report").Funcs(template.FuncMap{
	"pct":    func(f float64) string { return fmt.Sprintf("%.1f%%", 100*f) },
	"num":    func(f *float64) string { return floatText(f, "%.1f") },
	"tokens": tokensText,
	"deref":  func(f *float64) float64 { return *f },
	"rate":   func(c CaseReport) float64 { return float64(c.Passes) / float64(max(c.Runs, 1)) },
}).Parse(reportTemplate))

// WriteHTML writes rep as one self-contained page (no external assets:
// the styles, the data and the script that draws the pass^k curve and the
// failing runs' timelines are all inline): the summary figures, each
// case's pass rate, the pass^j curve for j = 1..K, tokens and cost per
// success, and every failed run as a timeline of its steps and tool calls.
func WriteHTML(w io.Writer, rep *Report, opts HTMLOptions) error {
	if opts.Title == "" {
		opts.Title = "autoagent eval"
	}
	if opts.Generated.IsZero() {
		opts.Generated = time.Now()
	}
	return reportPage.Execute(w, struct {
		Opts      HTMLOptions
		Rep       *Report
		Generated string
	}{opts, rep, opts.Generated.UTC().Format(time.RFC3339)})
}
