//go:build wasip1

package pdk

func varGet(name string) ([]byte, bool) {
	off := extismVarGet(writeBlock([]byte(name))) // the host frees the name
	if off == 0 {
		return nil, false
	}
	return takeBlock(off), true
}

func varSet(name string, value []byte) {
	var v uint64
	if value != nil {
		v = writeBlock(value)
	}
	extismVarSet(writeBlock([]byte(name)), v) // the host frees both blocks
}
