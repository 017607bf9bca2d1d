package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/autoagent-go/autoagent/internal/termtext"
	"github.com/autoagent-go/autoagent/trace"
	"github.com/spf13/cobra"
)

func init() { addCommand(newTraceCmd) }

func newTraceCmd() *cobra.Command {
	traceCmd := &cobra.Command{
		Use:   "trace",
		Short: "Read trace files written with --trace",
	}
	var asJSON bool
	summarize := &cobra.Command{
		Use:   "summarize FILE.jsonl",
		Short: "Summarise a JSONL trace: runs, steps, model and tool calls, tokens, refusals",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			f, err := os.Open(args[0])
			if err != nil {
				return err
			}
			defer f.Close()
			sum, err := trace.Summarize(f)
			if err != nil {
				return fmt.Errorf("summarizing %s: %w", args[0], err)
			}
			if asJSON {
				enc := json.NewEncoder(c.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(sum)
			}
			// A trace holds what models and tools said.
			_, err = fmt.Fprint(c.OutOrStdout(), termtext.Text(sum.String()))
			return err
		},
	}
	summarize.Flags().BoolVar(&asJSON, "json", false, "print the summary as JSON")
	traceCmd.AddCommand(summarize)
	return traceCmd
}
