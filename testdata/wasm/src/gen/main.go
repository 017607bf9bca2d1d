// Command gen writes the hostile modules of testdata/wasm that are shaped
// by numbers rather than written by hand: compile and instantiation bombs
// whose size makes WAT impractical. build.sh runs it as
//
//	go run ./src/gen NAME >OUT
//
// Each module is a complete Extism tool module (a describe export that
// outputs its one tool, and a call export returning 0; nothing calls the
// bomb), so that before the limit it attacks it loaded and served calls.
// Every shape takes its numbers from flags, for measuring the cost of a
// shape by hand; build.sh uses the defaults, which are what HOSTILE.md
// describes.
package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	fs := flag.NewFlagSet("gen", flag.ExitOnError)
	funcs := fs.Int("funcs", -1, "functions of the bomb (default: the shape's)")
	arity := fs.Int("arity", -1, "values a branch, block or call carries, or locals read (default: the shape's)")
	count := fs.Int("n", -1, "branches, blocks, loops or calls (default: the shape's)")
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: gen NAME [-funcs N] [-arity N] [-n N] >OUT")
		os.Exit(2)
	}
	name := os.Args[1]
	_ = fs.Parse(os.Args[2:])
	s, ok := shapes[name]
	if !ok {
		fmt.Fprintf(os.Stderr, "gen: no module %q\n", name)
		os.Exit(2)
	}
	p := s.defaults
	for _, o := range []struct{ v, dst *int }{{funcs, &p.funcs}, {arity, &p.arity}, {count, &p.n}} {
		if *o.v >= 0 {
			*o.dst = *o.v
		}
	}
	m := newModule(name)
	s.build(m, p)
	if _, err := os.Stdout.Write(m.encode()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// params are a shape's numbers.
type params struct{ funcs, arity, n int }

type shape struct {
	defaults params
	build    func(m *module, p params)
}

var shapes = map[string]shape{}
