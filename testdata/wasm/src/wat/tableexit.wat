;; tableexit: its WASI import proc_exit in a table, called through
;; call_indirect: the one way left to reach an import other than a direct
;; call, which the host does not refuse (C puts the functions whose
;; address it takes in the table, imports among them).
;; Expected: the call ends as proc_exit(7) inside `call` does ("exited
;; with status 7"); the host's WASI module still serves other modules.
(module
  (type $exit (func (param i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $proc_exit (type $exit)))
  ;;@describe
  (memory 1)
  (data (i32.const 0) "{\"tools\":[{\"name\":\"tableexit\",\"description\":\"Calls proc_exit through its table.\",\"inputSchema\":{\"type\":\"object\"}}]}\00")
  (table 1 funcref)
  (elem (i32.const 0) $proc_exit)
  (func (export "call") (result i32)
    (call_indirect (type $exit) (i32.const 7) (i32.const 0))
    (i32.const 0)))
