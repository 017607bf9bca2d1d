package wasmbin

import (
	"math/rand/v2"
	"os"
	"testing"
)

// TestGeneratedAgreeWithWazero: random valid modules (genModule) are
// valid for both validators, and every module a one-byte mutation of them
// makes is refused by ours whenever wazero refuses it.
func TestGeneratedAgreeWithWazero(t *testing.T) {
	rt := interpreter(t)
	r := rand.New(rand.NewPCG(1, 2))
	accepted, mutants, refused, stricter := 0, 0, 0, 0
	for i := range 400 {
		b := genModule(r)
		_, ours := Validate(b, Limits{})
		theirs := wazeroValid(t, rt, b)
		if ours != nil || theirs != nil {
			t.Fatalf("generated module %d: we say %v, wazero says %v", i, ours, theirs)
		}
		accepted++
		for range 20 {
			m := append([]byte(nil), b...)
			p := 8 + r.IntN(len(m)-8)
			m[p] ^= byte(1 + r.IntN(255))
			mutants++
			_, ours := Validate(m, Limits{})
			if ours != nil {
				refused++
				if wazeroValid(t, rt, m) == nil {
					stricter++
					if stricter <= 5 {
						t.Logf("stricter than wazero: %v", ours)
					}
				}
				continue
			}
			if err := wazeroValid(t, rt, m); err != nil {
				t.Fatalf("a mutant we accept, wazero refuses (%v): byte %d of module %d\n%x", err, p, i, m)
			}
		}
	}
	t.Logf("%d generated modules valid for both; %d mutants, %d refused by us (%d of which wazero accepts), none accepted that wazero refuses", accepted, mutants, refused, stricter)
}

// FuzzValidate: any module Validate accepts, wazero accepts; Validate
// never panics. Seeds: generated modules and the small ones of the corpus.
func FuzzValidate(f *testing.F) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 20 {
		f.Add(genModule(r))
	}
	for _, p := range corpus(f) {
		if b, err := os.ReadFile(p); err == nil && len(b) < 64<<10 {
			f.Add(b)
		}
	}
	rt := interpreter(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		if _, err := Validate(b, Limits{}); err != nil {
			return
		}
		if err := wazeroValid(t, rt, b); err != nil {
			t.Fatalf("we accept a module wazero refuses: %v", err)
		}
	})
}
