package loop

import "fmt"

// protect calls f and turns a panic into the error "<what> panicked: <value>".
// The loop calls the host's code (system prompt function, memory, provider,
// policy, post-turn hook, checkpoint) through it, so a bug there fails a
// step the way an error would instead of crashing the process that embeds
// the loop. Tools have their own guard (tool.SafeCall).
func protect(what string, f func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%s panicked: %v", what, p)
		}
	}()
	return f()
}
