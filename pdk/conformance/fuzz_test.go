package conformance_test

import (
	"bytes"
	"testing"
)

// FuzzDifferential feeds the same bytes to the five modules and wants the
// same answer from each: any input on which a PDK's JSON reading, UTF-8
// decoding, counting or escaping differs from the Go PDK's is a bug. The
// seeds are the conformance cases; `go test -fuzz FuzzDifferential` looks
// for more.
func FuzzDifferential(f *testing.F) {
	for _, c := range loadCases(f) {
		f.Add(c.input)
	}
	mods := map[string]*rawModule{}
	for _, lang := range languages {
		mods[lang] = loadRaw(f, lang)
	}
	f.Fuzz(func(t *testing.T, input []byte) {
		want := mods["go"].call(t, "call", input)
		for _, lang := range languages[1:] {
			if got := mods[lang].call(t, "call", input); !bytes.Equal(got, want) {
				t.Errorf("input %q:\n%s: %s\n  go: %s", input, lang, got, want)
			}
		}
	})
}
