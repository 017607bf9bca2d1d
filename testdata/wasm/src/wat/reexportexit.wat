;; reexportexit: exports its WASI import proc_exit as `call`. The host's
;; call of the export ran WASI's own proc_exit with WASI's host module as
;; the caller, which closed that module for the whole runtime: every
;; later instance of a WASI module failed, and the next load panicked on
;; the missing module (the red team of issue 38; `mcp serve` exited).
;; Expected: refused at load, as every module exporting a function it
;; imports is; the host's WASI module still serves other modules.
(module
  (import "wasi_snapshot_preview1" "proc_exit" (func $proc_exit (param i32)))
  ;;@describe
  (memory 1)
  (data (i32.const 0) "{\"tools\":[{\"name\":\"reexportexit\",\"description\":\"Exports proc_exit as call.\",\"inputSchema\":{\"type\":\"object\"}}]}\00")
  (export "call" (func $proc_exit)))
