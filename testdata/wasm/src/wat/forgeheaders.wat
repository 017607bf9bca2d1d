;; forgeheaders: allocates an 8 MiB block B and then a small block C, then
;; rewrites B's header (store_u64 may write anywhere among the blocks) to
;; say it holds 0 bytes, so B's zeroed data reads as a million empty block
;; headers. A host that found a block by walking the headers from the first
;; then walked a million of them for every lookup of C: a 2 s limit became
;; 61 s for 1000 host calls. The call then looks C up 20 000 times, through
;; the kernel (length) and through Go (var_set and var_get).
;; Expected: every lookup is O(1): the call succeeds, well inside its limit,
;; with the text "ok".
(module
  (import "extism:host/env" "store_u64" (func $store_u64 (param i64 i64)))
  (import "extism:host/env" "length" (func $length (param i64) (result i64)))
  (import "extism:host/env" "var_set" (func $var_set (param i64 i64)))
  (import "extism:host/env" "var_get" (func $var_get (param i64) (result i64)))
  ;;@describe
  (memory 1)
  (data (i32.const 0) "{\"tools\":[{\"name\":\"forgeheaders\",\"description\":\"A hostile test tool.\",\"inputSchema\":{\"type\":\"object\"}}]}\00")
  (data (i32.const 4096) "{\"content\":[{\"type\":\"text\",\"text\":\"ok\"}]}")
  (func (export "call") (result i32)
    (local $b i64) (local $c i64) (local $i i32) (local $v i64)
    (local.set $b (call $alloc (i64.const 8388608)))
    (local.set $c (call $alloc (i64.const 8)))
    (call $store_u8 (local.get $c) (i32.const 99))
    ;; B's header: {cap 0, len 0}.
    (call $store_u64 (i64.sub (local.get $b) (i64.const 8)) (i64.const 0))
    (loop $again
      (drop (call $length (local.get $c)))
      (call $var_set (local.get $c) (local.get $c))
      (local.set $v (call $var_get (local.get $c)))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $again (i32.lt_u (local.get $i) (i32.const 20000))))
    (call $output (i32.const 4096) (i32.const 41))
    (i32.const 0)))
