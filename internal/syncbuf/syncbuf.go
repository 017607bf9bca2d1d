// Package syncbuf is a bytes.Buffer that many goroutines may write while
// another reads it: a host's or a server's log, kept by a test.
//
//	var logs syncbuf.Buffer
//	h, err := host.New(ctx, host.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
//	…
//	if !logs.HasLine("snapshot", "taken") {
//		t.Errorf("no snapshot logged:\n%s", logs.String())
//	}
package syncbuf

import (
	"bytes"
	"strings"
	"sync"
)

// Buffer is a bytes.Buffer behind a mutex. The zero value is an empty
// buffer ready to use; a Buffer must not be copied after first use.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns what was written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// HasLine reports whether one line written so far holds every part.
func (b *Buffer) HasLine(parts ...string) bool {
	for line := range strings.Lines(b.String()) {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(line, p)
		}
		if all {
			return true
		}
	}
	return false
}
