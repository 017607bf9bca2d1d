// Package kvcap is the kv: capability: the persistent key-value store of
// extism:host/user (kv_get, kv_set, kv_delete, kv_keys), written against
// [Call], and the [Stores] it keeps, one bbolt file per namespace.
//
// A module reaches only the namespaces of its kv: grants. Every namespace
// has a quota (host.Limits.KVNamespace, counted across calls and
// processes: each entry its key, its value and 64 bytes), each value a
// limit (Limits.KVValue), each key 1 to 512 bytes, and a listing stops at
// 10 000 keys or 1 MiB of JSON. A store another process holds is waited
// for until the call's deadline. host/ABI.md §1.4 is the guest's view.
//
//	stores := kvcap.NewStores(dir)
//	// …per instance, the host's Call returns
//	kvcap.Access{Stores: stores, Namespaces: []string{"notes"}}
package kvcap
