package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/autoagent-go/autoagent/internal/toolbuild"
	"github.com/spf13/cobra"
)

func init() { addToolsCommand(newToolsBuildCmd) }

func newToolsBuildCmd() *cobra.Command {
	var out, pdkDir string
	c := &cobra.Command{
		Use:   "build DIR|FILE [-o OUT.wasm]",
		Short: "Build a tool module from source with the PDK (Go, C, Rust, AssemblyScript, Zig)",
		Long: `Build a tool module from source with the autoagent PDK.

The language is detected from the source: a go.mod or .go files (Go),
assembly/*.ts (AssemblyScript), .c (C), .rs (Rust) or .zig (Zig) files.
The module is written to OUT.wasm, by default NAME.wasm in the current
directory. When a toolchain is missing, the error says how to install it.

A Go source with no go.mod (a main.go on its own) is built in a temporary
module with the Go PDK: the checkout's pdk/go when one is found, else the
copy built into autoagent. Its directory is left as it was.`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			res, err := toolbuild.Build(c.Context(), args[0], toolbuild.Options{
				Output:   out,
				PDKDir:   pdkDir,
				Progress: c.ErrOrStderr(),
			})
			if errors.Is(err, toolbuild.ErrUnknownLanguage) {
				return usageError(err)
			}
			if err != nil {
				return err
			}
			_, err = fmt.Fprintf(c.OutOrStdout(), "%s (%s, %d bytes, built in %s)\n",
				res.Output, res.Language, res.Size, res.Duration.Round(time.Millisecond))
			return err
		},
	}
	c.Flags().StringVarP(&out, "output", "o", "", "the module to write (default NAME.wasm in the current directory)")
	c.Flags().StringVar(&pdkDir, "pdk", "", "the pdk/ directory of an autoagent checkout (default $AUTOAGENT_PDK, else found above the source)")
	return c
}
