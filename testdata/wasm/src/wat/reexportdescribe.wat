;; reexportdescribe: exports its WASI import proc_exit as `describe`,
;; which the host runs at load, with no capabilities: the host's WASI
;; module was closed before the module was even approved.
;; Expected: refused at load, before describe runs.
(module
  (import "wasi_snapshot_preview1" "proc_exit" (func $proc_exit (param i32)))
  (export "describe" (func $proc_exit))
  (func (export "call") (result i32) (i32.const 0)))
