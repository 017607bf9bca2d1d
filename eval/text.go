package eval

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// WriteText writes rep as a table (case, passes/k, tokens) then the
// summary figures, and each failed run's reason, for a terminal.
func WriteText(w io.Writer, rep *Report) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "CASE\tPASSES\tTOKENS\n")
	for _, c := range rep.Cases {
		fmt.Fprintf(tw, "%s\t%d/%d\t%s\n", c.ID, c.Passes, c.Runs, tokensText(c.Tokens))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\n%d runs (%d cases × k=%d): pass@1 %.3f  pass^%d %.3f  pass@%d %.3f\n",
		rep.Runs, len(rep.Cases), rep.K, rep.PassAt1, rep.K, rep.PassHatK, rep.K, rep.PassAtK)
	fmt.Fprintf(w, "tokens per success: %s\n", floatText(rep.TokensPerSuccess, "%.1f"))
	if rep.CostPerSuccess != nil {
		fmt.Fprintf(w, "cost per success: %.6f\n", *rep.CostPerSuccess)
	}
	if rep.PassHatKAtBudget != nil {
		fmt.Fprintf(w, "pass^%d within the token budget: %.3f\n", rep.K, *rep.PassHatKAtBudget)
	}
	if len(rep.PassHatCurve) > 1 {
		fmt.Fprint(w, "pass^k for k=1..", rep.K, ":")
		for _, p := range rep.PassHatCurve {
			fmt.Fprintf(w, " %.3f", p)
		}
		fmt.Fprintln(w)
	}
	first := true
	for _, c := range rep.Cases {
		for _, f := range c.Failures {
			if first {
				fmt.Fprintln(w, "\nfailed runs:")
				first = false
			}
			fmt.Fprintf(w, "  %s run %d: %s\n", c.ID, f.Run+1, f.Reason)
		}
	}
	return nil
}

func tokensText(n *int64) string {
	if n == nil {
		return "unknown"
	}
	return fmt.Sprint(*n)
}

func floatText(f *float64, format string) string {
	if f == nil {
		return "unknown"
	}
	return fmt.Sprintf(format, *f)
}
