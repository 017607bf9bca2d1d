package syncbuf

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

// Writers on many goroutines lose no line and tear none.
func TestConcurrentWritesKeepEveryLine(t *testing.T) {
	var b Buffer
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 100 {
				fmt.Fprintf(&b, "writer %d line %d\n", g, i)
			}
		})
	}
	wg.Wait()
	if n := strings.Count(b.String(), "\n"); n != 800 {
		t.Fatalf("%d lines, want 800", n)
	}
	if !b.HasLine("writer 7 ", "line 99") {
		t.Error("the last line of writer 7 is missing")
	}
}

// HasLine needs every part on the same line.
func TestHasLineNeedsOneLineWithEveryPart(t *testing.T) {
	var b Buffer
	b.Write([]byte("level=INFO msg=snapshot\nlevel=WARN msg=taken\n"))
	if b.HasLine("snapshot", "taken") {
		t.Error("parts on two lines counted as one")
	}
	if !b.HasLine("WARN", "taken") || !b.HasLine() {
		t.Error("a line holding every part not found")
	}
	var empty Buffer
	if empty.HasLine() {
		t.Error("an empty buffer has no line")
	}
}
