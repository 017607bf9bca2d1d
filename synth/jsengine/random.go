package main

import (
	"crypto/rand"
	mrand "math/rand/v2"

	"github.com/dop251/goja"
)

// freshRandom is a runtime's Math.random: ChaCha8 seeded from crypto/rand
// when the script first draws, so during the call. goja's default reads
// math/rand's global generator, whose state the Go runtime seeds as the
// instance starts: every instance the host restores from one snapshot
// would share it and draw the same numbers (see RATIONALE.md "Why does
// the JavaScript engine seed Math.random at the call?"). crypto/rand
// reads the host's random_get at every read: real randomness on an
// ordinary host, the seeded generator a deterministic one resumes where
// the snapshot left it, so a code-mode program run again draws the same.
// One read per runtime keeps Math.random at a generator's cost, not a
// host call's.
func freshRandom() goja.RandSource {
	var r *mrand.Rand
	return func() float64 {
		if r == nil {
			var seed [32]byte
			_, _ = rand.Read(seed[:]) // it never fails: it ends the program instead
			r = mrand.New(mrand.NewChaCha8(seed))
		}
		return r.Float64()
	}
}
