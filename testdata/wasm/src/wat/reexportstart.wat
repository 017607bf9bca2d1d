;; reexportstart: a WASI command whose `_start` is its WASI import
;; proc_exit (a sidecar describes its tool), so each call of it ran
;; WASI's own proc_exit with the host's WASI module as the caller.
;; Expected: refused at load.
(module
  (import "wasi_snapshot_preview1" "proc_exit" (func $proc_exit (param i32)))
  (memory (export "memory") 1)
  (export "_start" (func $proc_exit)))
