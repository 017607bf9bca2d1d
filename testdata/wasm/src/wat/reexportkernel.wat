;; reexportkernel: exports imports of the host that are not WASI's as its
;; own functions: the Extism kernel's `reset` as `call`, hyper-mcp's
;; `notify_tool_list_changed` (a host function in Go) as `_initialize`,
;; which the host runs on every new instance.
;; Expected: refused at load, as every module exporting a function it
;; imports is.
(module
  (import "extism:host/env" "reset" (func $reset))
  (import "extism:host/user" "notify_tool_list_changed" (func $changed))
  ;;@describe
  (memory 1)
  (data (i32.const 0) "{\"tools\":[{\"name\":\"reexportkernel\",\"description\":\"Exports host imports as its own.\",\"inputSchema\":{\"type\":\"object\"}}]}\00")
  (export "call" (func $reset))
  (export "_initialize" (func $changed)))
