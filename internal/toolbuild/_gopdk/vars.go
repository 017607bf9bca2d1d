package pdk

// GetVar returns the per-instance variable name and whether it is set.
// Variables live as long as the module instance on the host, across calls,
// and are lost when the host discards the instance: use them as a cache,
// and [KV] for data that must last.
func GetVar(name string) ([]byte, bool) { return varGet(name) }

// SetVar sets the per-instance variable name; a nil value deletes it. The
// host caps the total size of an instance's variables.
func SetVar(name string, value []byte) { varSet(name, value) }
