// Command warmengine compiles the JavaScript engine module into the host's
// disk cache and runs its self-check, so the first tool a model writes
// loads at once. `make synth-engine` runs it after building the engine.
//
//	go run ./synth/internal/warmengine [ENGINE.wasm]
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/autoagent-go/autoagent/host"
	"github.com/autoagent-go/autoagent/synth"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run() error {
	ctx := context.Background()
	path := ""
	if len(os.Args) > 1 {
		path = os.Args[1]
	} else {
		p, err := synth.FindEngine(synth.EngineFile)
		if err != nil {
			return err
		}
		path = p
	}
	h, err := host.New(ctx, host.Options{})
	if err != nil {
		return err
	}
	defer h.Close(ctx)
	start := time.Now()
	l, err := synth.WarmEngine(ctx, h, path, os.Stderr)
	if err != nil {
		return err
	}
	defer l.Close(ctx)
	fmt.Fprintf(os.Stderr, "synth: JavaScript engine %s ready (sha256 %s, %.1fs)\n", path, l.SHA256()[:12], time.Since(start).Seconds())
	return nil
}
