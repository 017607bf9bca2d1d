package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/autoagent-go/autoagent/internal/backend"
	"github.com/autoagent-go/autoagent/internal/termtext"
	"github.com/autoagent-go/autoagent/memory"
	memremote "github.com/autoagent-go/autoagent/memory/remote"
	provremote "github.com/autoagent-go/autoagent/providers/remote"
)

func init() { addCommand(newBackendsCmd) }

func newBackendsCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "backends",
		Short: "Provider and memory backends that run as go-plugin subprocesses",
	}
	c.AddCommand(newBackendsListCmd())
	return c
}

// listedBackend is one row of `backends list`, and its --json form.
type listedBackend struct {
	Name string       `json:"name"`
	Kind backend.Kind `json:"kind"`
	Path string       `json:"path"`
	// Protocol is the protocol version negotiated at the handshake; 0
	// when the backend was not started or failed to start.
	Protocol int `json:"protocol"`
	// Serves is what the backend reports serving: a provider's name or a
	// memory's description.
	Serves string `json:"serves,omitempty"`
	// Interfaces lists a memory's optional interfaces.
	Interfaces []string `json:"interfaces,omitempty"`
	// Error says why the backend could not be started and handshaken.
	Error string `json:"error,omitempty"`
}

func newBackendsListCmd() *cobra.Command {
	var (
		dir     string
		asJSON  bool
		start   bool
		noStart bool
		timeout time.Duration
	)
	c := &cobra.Command{
		Use:   "list [--backends DIR] [--json] [--start]",
		Short: "List the backends directory: name, kind, path (and with --start, protocol version)",
		Long: `List the backend binaries of the backends directory: files named
autoagent-provider-NAME or autoagent-memory-NAME with an execute bit.

Nothing is started unless you ask: with --start each backend is started,
handshaken (which negotiates the protocol version) and stopped again, so
the list shows whether it works, and the exit status is 1 when one failed
to start. A backend that needs arguments (autoagent-provider-http needs
--provider) is best installed as a small wrapper script that supplies them.

The directory is --backends, else $AUTOAGENT_BACKENDS, else
~/.config/autoagent/backends ($XDG_CONFIG_HOME/autoagent/backends): a
backends directory of the working directory is never searched unless
named, since a checkout could ship binaries there.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if start && noStart {
				return usageError(errors.New("--start and --no-start: choose one"))
			}
			d := backend.Dir(dir)
			if d == "" {
				return fmt.Errorf("no backends directory: name one with --backends DIR or $%s", backend.DirEnv)
			}
			found, err := backend.List(d)
			if errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("backends directory %s does not exist: name one with --backends DIR or $%s (a directory of the working directory is never searched unless named)", d, backend.DirEnv)
			}
			if err != nil {
				return err
			}
			rows := make([]listedBackend, 0, len(found))
			failed := false
			for _, f := range found {
				row := listedBackend{Name: f.Name, Kind: f.Kind, Path: f.Path}
				if start {
					probeBackend(c.Context(), &row, timeout)
					failed = failed || row.Error != ""
				}
				rows = append(rows, row)
			}
			if err := printBackends(c, d, rows, asJSON, !start); err != nil {
				return err
			}
			if failed {
				return silentFailure
			}
			return nil
		},
	}
	c.Flags().StringVar(&dir, "backends", "", "backends directory (default $"+backend.DirEnv+", else ~/.config/autoagent/backends)")
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	c.Flags().BoolVar(&start, "start", false, "start and handshake each backend to show its protocol version and whether it works")
	c.Flags().BoolVar(&noStart, "no-start", false, "list without starting anything (the default)")
	c.Flags().MarkHidden("no-start")
	c.Flags().DurationVar(&timeout, "timeout", 15*time.Second, "how long each backend may take to start and answer")
	return c
}

// probeBackend starts the backend of row, records what its handshake and
// Info call report, and stops it.
func probeBackend(ctx context.Context, row *listedBackend, timeout time.Duration) {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	switch row.Kind {
	case backend.KindProvider:
		p, err := provremote.New(ctx, provremote.Options{Path: row.Path, Name: row.Name, StartTimeout: timeout})
		if err != nil {
			row.Error = err.Error()
			return
		}
		row.Protocol, row.Serves = p.ProtocolVersion(), p.Name()
		p.Close()
	case backend.KindMemory:
		m, err := memremote.New(ctx, memremote.Options{Path: row.Path, Name: row.Name, StartTimeout: timeout})
		if err != nil {
			row.Error = err.Error()
			return
		}
		row.Protocol, row.Serves = m.ProtocolVersion(), m.Served()
		if _, ok := m.(memory.Rememberer); ok {
			row.Interfaces = append(row.Interfaces, "remember")
		}
		if _, ok := m.(memory.Forgetter); ok {
			row.Interfaces = append(row.Interfaces, "forget")
		}
		if _, ok := m.(memory.Flusher); ok {
			row.Interfaces = append(row.Interfaces, "flush")
		}
		m.Close()
	}
}

func printBackends(c *cobra.Command, dir string, rows []listedBackend, asJSON, noStart bool) error {
	out := c.OutOrStdout()
	if asJSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			Dir      string          `json:"dir"`
			Backends []listedBackend `json:"backends"`
		}{dir, rows})
	}
	if len(rows) == 0 {
		_, err := fmt.Fprintf(out, "no backends in %s (binaries named autoagent-provider-NAME or autoagent-memory-NAME)\n", dir)
		return err
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tKIND\tPROTOCOL\tSTATUS\tPATH")
	for _, r := range rows {
		proto, status := strconv.Itoa(r.Protocol), "ok: serves "+r.Serves
		switch {
		case noStart:
			proto, status = "-", "not started (--start to check it)"
		case r.Error != "":
			proto, status = "-", "failed: "+firstLine(r.Error)
		case len(r.Interfaces) > 0:
			status += " (" + strings.Join(r.Interfaces, ", ") + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", termtext.Name(r.Name), r.Kind, proto, termtext.Name(status), termtext.Name(r.Path))
	}
	return tw.Flush()
}

// firstLine keeps a table row on one line; --json has the whole error.
func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
