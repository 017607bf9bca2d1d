//go:build !wasip1

package pdk

// Outside a host the variables live in the process, as they would in one
// module instance.
var localVars = map[string][]byte{}

func varGet(name string) ([]byte, bool) {
	v, ok := localVars[name]
	return v, ok
}

func varSet(name string, value []byte) {
	if value == nil {
		delete(localVars, name)
		return
	}
	localVars[name] = append([]byte(nil), value...)
}
