;; startspin: a start function that never ends (a sidecar describes the
;; tool, so no describe runs). A pool instantiates it in the background
;; ahead of calls, and closing the module once waited for that
;; instantiation to reach its time limit.
(module
  (memory 1)
  (func $spin (loop $forever (br $forever)))
  (start $spin)
  (func (export "call") (result i32) (i32.const 0)))
