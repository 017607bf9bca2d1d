// Command warmengine compiles the JavaScript engine module into the host's
// disk cache and runs its self-check, so the first tool a model writes
// loads at once. `make synth-engine` runs it after building the engine.
//
//	go run ./synth/internal/warmengine [ENGINE.wasm]...
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
	paths := os.Args[1:]
	if len(paths) == 0 {
		p, err := synth.FindEngine(synth.EngineFile)
		if err != nil {
			return err
		}
		paths = []string{p}
	}
	h, err := host.New(ctx, host.Options{})
	if err != nil {
		return err
	}
	defer h.Close(ctx)
	for _, path := range paths {
		start := time.Now()
		l, err := synth.WarmEngine(ctx, h, path, os.Stderr)
		if err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "synth: JavaScript engine %s ready (sha256 %s, %.1fs)\n", path, l.SHA256()[:12], time.Since(start).Seconds())
		if err := l.Close(ctx); err != nil {
			return err
		}
	}
	return nil
}
