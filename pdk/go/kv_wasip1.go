//go:build wasip1

package pdk

// The key-value functions are not part of the Extism kernel; the autoagent
// host provides them in the "extism:host/user" module to modules granted a
// kv: namespace (host/ABI.md, section 1.4). A namespace block of 0 means
// the module's only namespace. A returned block (value, key list) belongs
// to the module. A refused or failed operation traps, ending the call with
// the host's message.

//go:wasmimport extism:host/user kv_get
func hostKVGet(namespace, key uint64) uint64

//go:wasmimport extism:host/user kv_set
func hostKVSet(namespace, key, value uint64)

//go:wasmimport extism:host/user kv_delete
func hostKVDelete(namespace, key uint64)

//go:wasmimport extism:host/user kv_keys
func hostKVKeys(namespace, prefix uint64) uint64

// nsBlock passes "" as 0, the host's "only namespace" shorthand.
func nsBlock(ns string) uint64 {
	if ns == "" {
		return 0
	}
	return writeBlock([]byte(ns))
}

func kvGet(ns, key string) ([]byte, bool, error) {
	off := hostKVGet(nsBlock(ns), writeBlock([]byte(key)))
	if off == 0 {
		return nil, false, nil
	}
	return takeBlock(off), true, nil
}

func kvSet(ns, key string, value []byte) error {
	hostKVSet(nsBlock(ns), writeBlock([]byte(key)), writeBlock(value))
	return nil
}

func kvDelete(ns, key string) error {
	hostKVDelete(nsBlock(ns), writeBlock([]byte(key)))
	return nil
}

func kvList(ns, prefix string) ([]byte, error) {
	off := hostKVKeys(nsBlock(ns), writeBlock([]byte(prefix)))
	if off == 0 {
		return nil, nil
	}
	return takeBlock(off), nil
}
