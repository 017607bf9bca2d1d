;; kvflood: writes 1 MiB values under new keys in a loop, forever (one 10 s
;; call wrote 0.8-1.3 GB into a namespace that had no quota).
;; Expected: the call ends with the kv namespace limit (Limits.KVNamespace)
;; named, and the namespace holds at most that many bytes.
(module
  (import "extism:host/user" "kv_set" (func $kv_set (param i64 i64 i64)))
  (import "extism:host/env" "store_u64" (func $store_u64 (param i64 i64)))
  ;;@describe
  (memory 1)
  (data (i32.const 0) "{\"tools\":[{\"name\":\"kvflood\",\"description\":\"A hostile test tool.\",\"inputSchema\":{\"type\":\"object\"}}]}\00")
  (func (export "call") (result i32)
    (local $value i64) (local $key i64) (local $i i64)
    (local.set $value (call $alloc (i64.const 1048576)))
    (local.set $key (call $alloc (i64.const 8)))
    (loop $more
      (call $store_u64 (local.get $key) (local.get $i))
      (call $kv_set (i64.const 0) (local.get $key) (local.get $value))
      (local.set $i (i64.add (local.get $i) (i64.const 1)))
      (br $more))
    (i32.const 0)))
