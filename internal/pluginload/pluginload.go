// Package pluginload starts a WASM host and loads a plugins directory into
// it, and tells a person what did not load: the steps the runtime
// (autoagent.New) and the CLI's tools-only commands (mcp serve, replay)
// share.
package pluginload

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/autoagent-go/autoagent/host"
	"github.com/autoagent-go/autoagent/host/plugindir"
	"github.com/autoagent-go/autoagent/internal/termtext"
	"github.com/autoagent-go/autoagent/manifest"
)

// Open starts a WASM host with hopts (sandbox.HostOptions: traced, code
// mode gated by the run) and loads the plugins directory opts names into
// it: approved modules run with their approved grants and limits, the
// others are reported in the snapshot. Close the returned Dir, then the
// Host. On error nothing is left open.
func Open(ctx context.Context, hopts host.Options, opts plugindir.Options) (*host.Host, *plugindir.Dir, error) {
	h, err := host.New(ctx, hopts)
	if err != nil {
		return nil, nil, err
	}
	d, err := plugindir.Open(ctx, h, opts)
	if err != nil {
		h.Close(ctx)
		return nil, nil, err
	}
	return h, d, nil
}

// Report tells a person, on w, which plugins of snap did not load (not
// approved, invalid), whether the manifest's approvals were ignored as
// untrusted, and which tool names conflict, with the command that helps.
func Report(w io.Writer, snap *plugindir.Snapshot) {
	var pending, invalid []string
	for _, p := range snap.Plugins {
		switch p.Status {
		case plugindir.StatusPending:
			if !errors.Is(p.Err, manifest.ErrUntrusted) { // said once below
				pending = append(pending, termtext.Name(p.File))
			}
		case plugindir.StatusInvalid:
			invalid = append(invalid, fmt.Sprintf("%s (%s)", termtext.Name(p.File), termtext.Text(p.Err.Error())))
		}
	}
	if snap.Untrusted != nil {
		fmt.Fprintf(w, "autoagent: %d approval(s) ignored, their modules pending: %s\n", snap.Ignored, termtext.Text(snap.Untrusted.Error()))
	}
	if len(pending) > 0 {
		fmt.Fprintf(w, "autoagent: %d plugin(s) not approved, not loaded: %s (see `autoagent tools list`, approve with `autoagent tools approve FILE`)\n", len(pending), strings.Join(pending, ", "))
	}
	for _, c := range snap.Conflicts {
		fmt.Fprintf(w, "autoagent: tool conflict: %s\n", termtext.Name(c.Error()))
	}
	for _, i := range invalid {
		fmt.Fprintf(w, "autoagent: invalid plugin: %s\n", i)
	}
}
