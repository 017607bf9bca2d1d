;; errorbomb: sets a 60 MiB error message (error_set bypassed the output
;; limit: a module with a 1 MiB output limit returned 180 MB, and an MCP
;; server reached 4.6 GB after four calls) and returns 1.
;; Expected: the call fails with the first 64 KiB of the message
;; (Limits.ErrorText) followed by a marker saying it was cut; the host's
;; memory stays bounded.
(module
  (import "extism:host/env" "error_set" (func $error_set (param i64)))
  ;;@describe
  (memory 1)
  (data (i32.const 0) "{\"tools\":[{\"name\":\"errorbomb\",\"description\":\"A hostile test tool.\",\"inputSchema\":{\"type\":\"object\"}}]}\00")
  (func (export "call") (result i32)
    (local $off i64)
    ;; Kernel memory starts zeroed: the message is 60 MiB of NUL bytes but
    ;; its first byte, which needs no store loop.
    (local.set $off (call $alloc (i64.const 62914560)))
    (call $store_u8 (local.get $off) (i32.const 69))
    (call $error_set (local.get $off))
    (i32.const 1)))
