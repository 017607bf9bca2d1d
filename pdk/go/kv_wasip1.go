//go:build wasip1

package pdk

import "github.com/autoagent-go/autoagent/pdk/go/extism"

// The key-value functions need a kv: grant (host/ABI.md, section 1.4). A
// namespace block of 0 means the module's only namespace. A returned block
// (value, key list) belongs to the module, and so do the argument blocks,
// freed once the host has read them. A refused or failed operation traps,
// ending the call with the host's message.

// nsBlock passes "" as 0, the host's "only namespace" shorthand.
func nsBlock(ns string) uint64 {
	if ns == "" {
		return 0
	}
	return extism.Write([]byte(ns))
}

// freeBlocks releases the argument blocks once the host has read them, so
// a call that touches many keys does not pile them up in Extism memory
// (freeing 0 is a no-op).
func freeBlocks(blocks ...uint64) {
	for _, b := range blocks {
		extism.Free(b)
	}
}

func kvGet(ns, key string) ([]byte, bool, error) {
	n, k := nsBlock(ns), extism.Write([]byte(key))
	off := extism.KVGet(n, k)
	freeBlocks(n, k)
	if off == 0 {
		return nil, false, nil
	}
	return extism.Take(off), true, nil
}

func kvSet(ns, key string, value []byte) error {
	n, k, v := nsBlock(ns), extism.Write([]byte(key)), extism.Write(value)
	extism.KVSet(n, k, v)
	freeBlocks(n, k, v)
	return nil
}

func kvDelete(ns, key string) error {
	n, k := nsBlock(ns), extism.Write([]byte(key))
	extism.KVDelete(n, k)
	freeBlocks(n, k)
	return nil
}

func kvList(ns, prefix string) ([]byte, error) {
	n, p := nsBlock(ns), extism.Write([]byte(prefix))
	off := extism.KVKeys(n, p)
	freeBlocks(n, p)
	if off == 0 {
		return nil, nil
	}
	return extism.Take(off), nil
}
