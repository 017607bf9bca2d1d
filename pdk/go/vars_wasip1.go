//go:build wasip1

package pdk

import "github.com/autoagent-go/autoagent/pdk/go/extism"

func varGet(name string) ([]byte, bool) {
	off := extism.VarGet(extism.Write([]byte(name))) // the host frees the name
	if off == 0 {
		return nil, false
	}
	return extism.Take(off), true
}

func varSet(name string, value []byte) {
	var v uint64
	if value != nil {
		v = extism.Write(value)
	}
	extism.VarSet(extism.Write([]byte(name)), v) // the host frees both blocks
}
