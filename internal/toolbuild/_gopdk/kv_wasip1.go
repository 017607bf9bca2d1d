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

// freeBlocks releases the argument blocks once the host has read them, so
// a call that touches many keys does not pile them up in Extism memory
// (freeing 0 is a no-op).
func freeBlocks(blocks ...uint64) {
	for _, b := range blocks {
		extismFree(b)
	}
}

func kvGet(ns, key string) ([]byte, bool, error) {
	n, k := nsBlock(ns), writeBlock([]byte(key))
	off := hostKVGet(n, k)
	freeBlocks(n, k)
	if off == 0 {
		return nil, false, nil
	}
	return takeBlock(off), true, nil
}

func kvSet(ns, key string, value []byte) error {
	n, k, v := nsBlock(ns), writeBlock([]byte(key)), writeBlock(value)
	hostKVSet(n, k, v)
	freeBlocks(n, k, v)
	return nil
}

func kvDelete(ns, key string) error {
	n, k := nsBlock(ns), writeBlock([]byte(key))
	hostKVDelete(n, k)
	freeBlocks(n, k)
	return nil
}

func kvList(ns, prefix string) ([]byte, error) {
	n, p := nsBlock(ns), writeBlock([]byte(prefix))
	off := hostKVKeys(n, p)
	freeBlocks(n, p)
	if off == 0 {
		return nil, nil
	}
	return takeBlock(off), nil
}
