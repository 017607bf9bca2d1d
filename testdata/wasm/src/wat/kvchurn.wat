;; kvchurn: rewrites one key with a 1 MiB value in a loop, forever. The
;; namespace never grows past 1 MiB, so its quota never applies, but each
;; write is a transaction and an fsync: one 10 s call wrote 1.2 GB to the
;; disk (found by attacking our own sandbox).
;; Expected: the call ends with the kv write limit (Limits.KVWrite) named,
;; after at most that many bytes written.
(module
  (import "extism:host/user" "kv_set" (func $kv_set (param i64 i64 i64)))
  ;;@describe
  (memory 1)
  (data (i32.const 0) "{\"tools\":[{\"name\":\"kvchurn\",\"description\":\"A hostile test tool.\",\"inputSchema\":{\"type\":\"object\"}}]}\00")
  (func (export "call") (result i32)
    (local $value i64) (local $key i64)
    (local.set $value (call $alloc (i64.const 1048576)))
    (local.set $key (call $alloc (i64.const 8)))
    (loop $more
      (call $kv_set (i64.const 0) (local.get $key) (local.get $value))
      (br $more))
    (i32.const 0)))
