// Command autoagent runs agents, manages sandboxed WebAssembly tools and
// their approvals, and serves them over MCP. See docs/ARCHITECTURE.md §8 for the
// contract of every verb.
//
// Exit codes: 0 success, 1 the operation failed (message on stderr),
// 2 usage error.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/autoagent-go/autoagent/internal/termtext"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// Verbs register their constructors from their own files with init
// functions (addCommand, addToolsCommand), so each verb lives in one file.
// Every execution builds a fresh command tree: flag values never leak from
// one run to the next (tests call run many times in one process).
var (
	rootCommands  []func() *cobra.Command
	toolsCommands []func() *cobra.Command
)

// addCommand registers the constructor of a top-level verb.
func addCommand(newCmd func() *cobra.Command) { rootCommands = append(rootCommands, newCmd) }

// addToolsCommand registers the constructor of an `autoagent tools` verb.
func addToolsCommand(newCmd func() *cobra.Command) {
	toolsCommands = append(toolsCommands, newCmd)
}

// newRootCmd builds the `autoagent` command tree.
func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "autoagent",
		Short:         "An embeddable LLM agent runtime whose tools run as sandboxed WebAssembly",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return usageError(err) })
	tools := &cobra.Command{
		Use:   "tools",
		Short: "Inspect, approve, build and call sandboxed WebAssembly tools",
	}
	for _, newCmd := range toolsCommands {
		tools.AddCommand(newCmd())
	}
	root.AddCommand(tools, newVersionCmd())
	for _, newCmd := range rootCommands {
		root.AddCommand(newCmd())
	}
	return root
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			_, err := fmt.Fprintln(c.OutOrStdout(), "autoagent", version)
			return err
		},
	}
}

// exitError carries a process exit code.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// usageError marks err as a usage error: exit status 2 with the usage shown.
func usageError(err error) error { return &exitError{code: 2, err: err} }

// silentFailure exits with status 1 without printing anything more: the
// command already wrote its output (a refused tool call, a failed verify).
var silentFailure = &exitError{code: 1, err: errors.New("")}

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run executes the CLI with args and returns the exit code. Tests call it
// directly. What it prints goes through termtext.Writer: whatever text
// from a module, a manifest, a config or a model a command prints
// without escaping it itself reaches no terminal raw.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	out, errw := termtext.NewWriter(stdout), termtext.NewWriter(stderr)
	defer out.Flush()
	defer errw.Flush()
	stdout, stderr = out, errw
	root := newRootCmd()
	// Once a verb's own code runs, its errors are failures (exit 1) unless
	// it marks them as usage errors itself: only cobra's errors before that
	// point are recognised by their text, so an operation failing with
	// words like "invalid argument" is not mistaken for a usage error.
	verbRan := false
	root.PersistentPreRun = func(*cobra.Command, []string) { verbRan = true }
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	cmd, err := root.ExecuteC()
	if err == nil {
		return 0
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.code == 2 {
			printError(stderr, ee.err)
			if cmd != nil {
				fmt.Fprintf(stderr, "\n%s", cmd.UsageString())
			}
			return 2
		}
		if ee.err.Error() != "" {
			printError(stderr, ee.err)
		}
		return ee.code
	}
	if !verbRan && isCobraUsage(err) {
		printError(stderr, err)
		if cmd != nil {
			fmt.Fprintf(stderr, "\n%s", cmd.UsageString())
		}
		return 2
	}
	printError(stderr, err)
	return 1
}

// printError writes err on stderr behind one "autoagent: " prefix. An
// error may quote a module, a manifest or a model: its text is escaped.
func printError(w io.Writer, err error) {
	fmt.Fprintf(w, "autoagent: %s\n", termtext.Text(strings.TrimPrefix(err.Error(), "autoagent: ")))
}

// rawWriter returns the writer under a termtext.Writer, for output meant
// for a program (an MCP stdio stream) or for escapes of the CLI's own.
func rawWriter(w io.Writer) io.Writer {
	if tw, ok := w.(*termtext.Writer); ok {
		return tw.Raw()
	}
	return w
}
