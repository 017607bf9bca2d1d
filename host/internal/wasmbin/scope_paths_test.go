package wasmbin

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// The random search of TestVerifyScopeRandomPaths: structured bodies built
// from the stack budget's patterns (charges and restores of two costs) and
// control instructions, in the shapes the rewrite makes and broken ones.

const (
	aCall = iota
	aCharge
	aCharge2 // a charge of another cost
	aExit
	aExit2
	aBlock
	aLoop
	aIf
	aBr
	aBrIf
	aBrTable
	aReturn
	aUnreachable
	aNop
	aKinds
)

type anode struct {
	kind    int
	body    []anode
	els     []anode
	hasElse bool
	depth   int
	targets []int
}

func agen(rnd *rand.Rand, nest, size int, scoped bool) []anode {
	var out []anode
	n := rnd.IntN(size + 1)
	for range n {
		k := rnd.IntN(aKinds)
		switch x := rnd.IntN(20); {
		case x < 5 && !scoped && nest < 4:
			// a charged block, as the rewrite makes it
			kinds := [...]int{aBlock, aLoop, aIf}
			c, e := aCharge, aExit
			if rnd.IntN(3) == 0 {
				c, e = aCharge2, aExit2
			}
			nd := anode{kind: kinds[rnd.IntN(3)], body: agen(rnd, nest+1, size-1, true)}
			if nd.kind == aIf && rnd.IntN(2) == 0 {
				nd.hasElse, nd.els = true, agen(rnd, nest+1, size-1, true)
			}
			if rnd.IntN(10) != 0 {
				out = append(out, anode{kind: c})
			}
			out = append(out, nd)
			if rnd.IntN(10) != 0 {
				out = append(out, anode{kind: e})
			}
			continue
		case x < 9:
			k = aCall
		case x < 11 && scoped:
			e := aExit
			if rnd.IntN(3) == 0 {
				e = aExit2
			}
			out = append(out, anode{kind: e}, anode{kind: aReturn})
			continue
		case x == 11:
			k = aCharge
		case x == 12:
			k = aExit
		}
		nd := anode{kind: k}
		switch k {
		case aBlock, aLoop, aIf:
			if nest >= 4 {
				nd.kind = aNop
				break
			}
			nd.body = agen(rnd, nest+1, size-1, scoped)
			if k == aIf && rnd.IntN(2) == 0 {
				nd.hasElse = true
				nd.els = agen(rnd, nest+1, size-1, scoped)
			}
		case aBr, aBrIf:
			nd.depth = rnd.IntN(nest)
		case aBrTable:
			for range rnd.IntN(3) + 1 {
				nd.targets = append(nd.targets, rnd.IntN(nest))
			}
		}
		out = append(out, nd)
	}
	return out
}

func aencode(in *Instrumentation, ns []anode, b []byte) []byte {
	for _, nd := range ns {
		switch nd.kind {
		case aCall:
			b = append(b, 0x20, 0x00, 0x10, 0x01, 0x1a)
		case aCharge:
			b = append(b, in.StackCharge(1000)...)
		case aCharge2:
			b = append(b, in.StackCharge(2000)...)
		case aExit:
			b = append(b, in.StackExit(1000)...)
		case aExit2:
			b = append(b, in.StackExit(2000)...)
		case aBlock:
			b = aencode(in, nd.body, append(b, 0x02, 0x40))
			b = append(b, 0x0b)
		case aLoop:
			b = append(append(b, 0x03, 0x40), in.FuelCheck(2000)...)
			b = aencode(in, nd.body, b)
			b = append(b, 0x0b)
		case aIf:
			b = aencode(in, nd.body, append(b, 0x20, 0x00, 0x04, 0x40))
			if nd.hasElse {
				b = aencode(in, nd.els, append(b, 0x05))
			}
			b = append(b, 0x0b)
		case aBr:
			b = appendU32(append(b, 0x0c), uint32(nd.depth))
		case aBrIf:
			b = appendU32(append(b, 0x20, 0x00, 0x0d), uint32(nd.depth))
		case aBrTable:
			b = append(b, 0x20, 0x00, 0x0e)
			b = appendU32(b, uint32(len(nd.targets)-1))
			for _, t := range nd.targets {
				b = appendU32(b, uint32(t))
			}
		case aReturn:
			b = append(b, 0x20, 0x00, 0x0f)
		case aUnreachable:
			b = append(b, 0x00)
		case aNop:
			b = append(b, 0x01)
		}
	}
	return b
}

type aresult struct {
	kind  int // 0 normal, 1 branch, 2 return, 3 trap/stop
	depth int
}

// leave is what a block or if passes on of how its body ended: a branch
// to its own label ends there, one to an outer label goes one level out.
func (res aresult) leave() aresult {
	if res.kind != 1 {
		return res
	}
	if res.depth == 0 {
		return aresult{}
	}
	res.depth--
	return res
}

type arun struct {
	rnd   *rand.Rand
	out   []int32 // outstanding charges, in order
	steps int
	bad   string
}

func (r *arun) exec(ns []anode) aresult {
	for _, nd := range ns {
		r.steps++
		if r.steps > 400 || r.bad != "" {
			return aresult{kind: 3}
		}
		var res aresult
		switch nd.kind {
		case aCall:
			if len(r.out) == 0 {
				r.bad = "call without an outstanding charge"
				return aresult{kind: 3}
			}
		case aCharge:
			r.out = append(r.out, 1000)
		case aCharge2:
			r.out = append(r.out, 2000)
		case aExit, aExit2:
			c := int32(1000)
			if nd.kind == aExit2 {
				c = 2000
			}
			found := -1
			for i := len(r.out) - 1; i >= 0; i-- {
				if r.out[i] == c {
					found = i
					break
				}
			}
			if found < 0 {
				r.bad = "restore without an outstanding charge"
				return aresult{kind: 3}
			}
			r.out = append(r.out[:found], r.out[found+1:]...)
		case aBlock:
			res = r.exec(nd.body)
			res = res.leave()
		case aLoop:
			for {
				res = r.exec(nd.body)
				if res.kind == 1 && res.depth == 0 {
					continue
				}
				if res.kind == 1 {
					res.depth--
				}
				break
			}
		case aIf:
			if r.rnd.IntN(2) == 0 {
				res = r.exec(nd.body)
			} else {
				res = r.exec(nd.els)
			}
			res = res.leave()
		case aBr:
			res = aresult{kind: 1, depth: nd.depth}
		case aBrIf:
			if r.rnd.IntN(2) == 0 {
				res = aresult{kind: 1, depth: nd.depth}
			}
		case aBrTable:
			res = aresult{kind: 1, depth: nd.targets[r.rnd.IntN(len(nd.targets))]}
		case aReturn:
			res = aresult{kind: 2}
		case aUnreachable:
			res = aresult{kind: 3}
		}
		if res.kind != 0 {
			return res
		}
	}
	return aresult{}
}

// TestVerifyScopeRandomPaths: every random body Verify accepts is run on
// 200 random paths (each if, br_if and br_table deciding at random),
// tracking the charges outstanding: no path may restore a charge it does
// not hold, or call with none outstanding. Removing the rule that an
// in-block restore precedes a return made it fail at once.
func TestVerifyScopeRandomPaths(t *testing.T) {
	t.Parallel()
	in := scopeInst
	in.prepare()
	rnd := rand.New(rand.NewPCG(1, 2))
	accepted, rich, richer, iters := 0, 0, 0, 60000
	if testing.Short() {
		iters = 10000
	}
	for i := 0; i < iters; i++ {
		prog := agen(rnd, 1, 5, false)
		code := append(in.FuelCheck(5000), aencode(&in, prog, nil)...)
		code = append(code, 0x20, 0x00, 0x0b)
		if _, err := Verify(scopeModule(code), Limits{}, scopeInst); err != nil {
			continue
		}
		accepted++
		if bytes.Contains(code, in.StackExit(1000)) && bytes.Contains(code, []byte{0x10, 0x01}) {
			rich++
		}
		if bytes.Contains(code, []byte{0x05}) && bytes.Contains(code, []byte{0x10, 0x01}) && bytes.Contains(code, []byte{0x0f}) {
			richer++
		}
		for range 200 {
			r := &arun{rnd: rnd}
			r.exec(prog)
			if r.bad != "" {
				t.Fatalf("accepted but %s: % x", r.bad, code)
			}
		}
	}
	t.Logf("%d of %d accepted, %d with a call and an exit, %d with else, call, return", accepted, iters, rich, richer)
	if rich < iters/400 {
		t.Fatalf("only %d accepted bodies call and restore: the search no longer reaches the rules", rich)
	}
}
