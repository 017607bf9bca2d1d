// Command pdkbuild builds a tool module with package toolbuild, as
// `autoagent tools build` does, without building the whole CLI: the make
// rules of mk/pdk.mk use it for the conformance modules and plugins/.
//
//	go run ./internal/toolbuild/pdkbuild -o OUT.wasm SOURCE
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/autoagent-go/autoagent/internal/toolbuild"
)

func main() {
	out := flag.String("o", "", "the module to write")
	quiet := flag.Bool("q", false, "print nothing but errors")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: pdkbuild [-q] [-o OUT.wasm] SOURCE")
		os.Exit(2)
	}
	opts := toolbuild.Options{Output: *out}
	if !*quiet {
		opts.Progress = os.Stderr
	}
	res, err := toolbuild.Build(context.Background(), flag.Arg(0), opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if !*quiet {
		fmt.Fprintf(os.Stderr, "wrote %s (%d bytes, %s)\n", res.Output, res.Size, res.Duration.Round(1e6))
	}
}
