;; reentry: granted tools:reentry, a tool that (through the application's
;; dispatcher) is this module's own, it calls itself from every call, so
;; the calls nest without end (40 levels held 1.7 GB in one call tree).
;; Expected: the call that would nest past Limits.CallDepth (4) is refused
;; with the call depth limit named, and every level returns that error.
(module
  (import "extism:host/user" "tool_call" (func $tool_call (param i64) (result i64)))
  (import "extism:host/env" "length" (func $length (param i64) (result i64)))
  (import "extism:host/env" "load_u8" (func $load_u8 (param i64) (result i32)))
  ;;@describe
  (memory 2)
  (data (i32.const 0) "{\"tools\":[{\"name\":\"reentry\",\"description\":\"A hostile test tool.\",\"inputSchema\":{\"type\":\"object\"}}]}\00")
  (data (i32.const 4096) "{\"name\":\"reentry\",\"arguments\":{}}")
  (func (export "call") (result i32)
    (local $res i64) (local $n i32) (local $i i32)
    (local.set $res (call $tool_call (call $block (i32.const 4096) (i32.const 33))))
    ;; Pass the nested result on as this call's output.
    (local.set $n (i32.wrap_i64 (call $length (local.get $res))))
    (block $done
      (loop $copy
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (i32.store8 (i32.add (i32.const 8192) (local.get $i))
          (call $load_u8 (i64.add (local.get $res) (i64.extend_i32_u (local.get $i)))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $copy)))
    (call $output (i32.const 8192) (local.get $n))
    (i32.const 0)))
