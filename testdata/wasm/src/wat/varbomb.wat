;; varbomb: Extism variables were bounded only by their bytes, 1 MiB per
;; instance counting name and value. 349 000 variables with 3-byte names
;; and empty values (the value block's header forged to length 0) counted
;; 1 047 000 bytes, but each was a Go map entry, a string and a slice in
;; the host's heap: 37 MiB per call, kept by a reused instance.
;; Expected: var_set past 1 024 variables traps, "at most 1024 variables".
(module
  (import "extism:host/env" "store_u64" (func $store_u64 (param i64 i64)))
  (import "extism:host/env" "var_set" (func $var_set (param i64 i64)))
  ;;@describe
  (memory 1)
  (data (i32.const 0) "{\"tools\":[{\"name\":\"varbomb\",\"description\":\"A hostile test tool.\",\"inputSchema\":{\"type\":\"object\"}}]}\00")
  (data (i32.const 4200) "{\"content\":[{\"type\":\"text\",\"text\":\"every variable was set\"}]}")
  (func (export "call") (result i32)
    (local $name i64) (local $val i64) (local $i i32)
    (local.set $name (call $alloc (i64.const 3)))
    (local.set $val (call $alloc (i64.const 1)))
    ;; the value block's header: capacity 8, length 0
    (call $store_u64 (i64.sub (local.get $val) (i64.const 8)) (i64.const 8))
    (block $done (loop $more
      (br_if $done (i32.ge_u (local.get $i) (i32.const 349000)))
      (call $store_u8 (local.get $name) (i32.and (local.get $i) (i32.const 255)))
      (call $store_u8 (i64.add (local.get $name) (i64.const 1)) (i32.and (i32.shr_u (local.get $i) (i32.const 8)) (i32.const 255)))
      (call $store_u8 (i64.add (local.get $name) (i64.const 2)) (i32.shr_u (local.get $i) (i32.const 16)))
      (call $var_set (local.get $name) (local.get $val))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $more)))
    (call $output (i32.const 4200) (i32.const 60))
    (i32.const 0)))
