;; relist: a stateful (hyper-mcp) module whose re-read of its lists never
;; ends. `call` says its tools changed, spins until 1.5 s have passed on
;; the WASI clock, and succeeds; the host then runs describe again in the
;; same instance, and that describe spins forever. The re-read is part of
;; the call, so the whole call ends by the call's time limit (it once got
;; a limit of its own after the call's: 3.9 s on a 2 s limit). Its own
;; describe, not describe.inc's: the second one must spin.
(module
  (import "wasi_snapshot_preview1" "clock_time_get" (func $clock (param i32 i64 i32) (result i32)))
  (import "extism:host/user" "notify_tool_list_changed" (func $changed))
  (import "extism:host/env" "alloc" (func $alloc (param i64) (result i64)))
  (import "extism:host/env" "store_u8" (func $store_u8 (param i64 i32)))
  (import "extism:host/env" "output_set" (func $output_set (param i64 i64)))
  (memory 1)
  (global $called (mut i32) (i32.const 0))
  (data (i32.const 0) "{\"tools\":[{\"name\":\"relist\",\"description\":\"Says its tools changed.\",\"inputSchema\":{\"type\":\"object\"}}]}")
  (data (i32.const 4096) "{\"content\":[{\"type\":\"text\",\"text\":\"ok\"}]}")
  (func $output (param $p i32) (param $n i32)
    (local $off i64) (local $i i32)
    (local.set $off (call $alloc (i64.extend_i32_u (local.get $n))))
    (block $copied
      (loop $copy
        (br_if $copied (i32.ge_u (local.get $i) (local.get $n)))
        (call $store_u8 (i64.add (local.get $off) (i64.extend_i32_u (local.get $i)))
          (i32.load8_u (i32.add (local.get $p) (local.get $i))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $copy)))
    (call $output_set (local.get $off) (i64.extend_i32_u (local.get $n))))
  (func $now (result i64)
    (drop (call $clock (i32.const 1) (i64.const 1000) (i32.const 8192)))
    (i64.load (i32.const 8192)))
  (func (export "describe") (result i32)
    (if (global.get $called) (then (loop $forever (br $forever))))
    (call $output (i32.const 0) (i32.const 101))
    (i32.const 0))
  (func (export "call") (result i32)
    (local $t0 i64)
    (global.set $called (i32.const 1))
    (call $changed)
    (local.set $t0 (call $now))
    (loop $spin
      (br_if $spin (i64.lt_u (i64.sub (call $now) (local.get $t0)) (i64.const 1500000000))))
    (call $output (i32.const 4096) (i32.const 41))
    (i32.const 0)))
