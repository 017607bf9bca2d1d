//go:build wasip1

package pdk

// The key-value functions are not part of the Extism kernel; the autoagent
// host provides them in the "extism:host/user" module to modules granted a
// kv: namespace. Every argument is a kernel block the host frees; a
// returned block (value, key list) belongs to the module. A refused or
// failed operation traps, ending the call with the host's message.

//go:wasmimport extism:host/user kv_get
func hostKVGet(namespace, key uint64) uint64

//go:wasmimport extism:host/user kv_set
func hostKVSet(namespace, key, value uint64)

//go:wasmimport extism:host/user kv_delete
func hostKVDelete(namespace, key uint64)

//go:wasmimport extism:host/user kv_list
func hostKVList(namespace, prefix uint64) uint64

func kvGet(ns, key string) ([]byte, bool, error) {
	off := hostKVGet(writeBlock([]byte(ns)), writeBlock([]byte(key)))
	if off == 0 {
		return nil, false, nil
	}
	return takeBlock(off), true, nil
}

func kvSet(ns, key string, value []byte) error {
	hostKVSet(writeBlock([]byte(ns)), writeBlock([]byte(key)), writeBlock(value))
	return nil
}

func kvDelete(ns, key string) error {
	hostKVDelete(writeBlock([]byte(ns)), writeBlock([]byte(key)))
	return nil
}

func kvList(ns, prefix string) ([]byte, error) {
	off := hostKVList(writeBlock([]byte(ns)), writeBlock([]byte(prefix)))
	if off == 0 {
		return nil, nil
	}
	return takeBlock(off), nil
}
