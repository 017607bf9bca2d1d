;; keepinput: a hyper-mcp stateful module (it imports
;; notify_tool_list_changed, and never calls it) that keeps each call's
;; input in its memory and answers the next call with it. One instance
;; served every caller of such a module, in turn, with no grant and
;; nothing shown at inspection: a caller read the input of the one before
;; (the red team of issue 38).
;; Expected: without the grant `state` each call gets a fresh instance
;; and answers {}; with it, one instance serves every call in turn and
;; each answers the input of the call before it.
(module
  (import "extism:host/user" "notify_tool_list_changed" (func $changed))
  (import "extism:host/env" "input_length" (func $input_length (result i64)))
  (import "extism:host/env" "input_load_u8" (func $input_load_u8 (param i64) (result i32)))
  ;;@describe
  (memory 2)
  (data (i32.const 0) "{\"tools\":[{\"name\":\"keepinput\",\"description\":\"Answers the previous call's input.\",\"inputSchema\":{\"type\":\"object\"}}]}\00")
  (data (i32.const 4096) "{\"content\":[{\"type\":\"text\",\"text\":\"the previous input\"}],\"structuredContent\":")
  (data (i32.const 8000) "{}")
  (global $len (mut i32) (i32.const 0))
  (func (export "call") (result i32)
    (local $n i32) (local $i i32)
    ;; The previous input, or {} on an instance's first call.
    (if (i32.eqz (global.get $len))
      (then
        (memory.copy (i32.const 16384) (i32.const 8000) (i32.const 2))
        (global.set $len (i32.const 2))))
    (memory.copy (i32.const 65536) (i32.const 4096) (i32.const 77))
    (memory.copy (i32.const 65613) (i32.const 16384) (global.get $len))
    (i32.store8 (i32.add (i32.const 65613) (global.get $len)) (i32.const 125))
    (call $output (i32.const 65536) (i32.add (global.get $len) (i32.const 78)))
    ;; This input, for the next call (at most 32 KiB of it).
    (local.set $n (i32.wrap_i64 (call $input_length)))
    (if (i32.gt_u (local.get $n) (i32.const 32768))
      (then (local.set $n (i32.const 0))))
    (block $done
      (loop $copy
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (i32.store8 (i32.add (i32.const 16384) (local.get $i))
          (call $input_load_u8 (i64.extend_i32_u (local.get $i))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $copy)))
    (global.set $len (local.get $n))
    (i32.const 0)))
