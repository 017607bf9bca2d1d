package main

import (
	"testing"
	"testing/cryptotest"
)

// drawTwice runs a script drawing two numbers from Math.random in a runtime
// newRuntime hands out, as a call does.
func drawTwice(t *testing.T) string {
	t.Helper()
	return mustRun(t, `function run() { return [Math.random(), Math.random()] }`, `{}`)
}

// TestMathRandomReadsCryptoRandAtTheCall: Math.random comes from
// crypto/rand, read when the script draws, not from state the instance's
// start-up left (which every instance restored from one snapshot shares):
// with crypto/rand's stream fixed, the prepared runtime and a later one
// draw the same numbers; with another stream, others.
func TestMathRandomReadsCryptoRandAtTheCall(t *testing.T) {
	prepared = prepareRuntime() // as the instance's start-up left it
	cryptotest.SetGlobalRandom(t, 1)
	a := drawTwice(t) // the prepared runtime
	cryptotest.SetGlobalRandom(t, 1)
	b := drawTwice(t) // a new one
	cryptotest.SetGlobalRandom(t, 2)
	c := drawTwice(t)
	if a != b {
		t.Errorf("the same crypto/rand stream gave %s and %s: Math.random does not read it at the call", a, b)
	}
	if a == c {
		t.Errorf("two crypto/rand streams both gave %s", a)
	}
	if d := drawTwice(t); d == c {
		t.Errorf("two runtimes drew %s from one stream: each must draw its own", d)
	}
}
