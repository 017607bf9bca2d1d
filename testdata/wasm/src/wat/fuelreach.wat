;; fuelreach: INVALID as written. Its call function writes global 1, one
;; past its only global, in a loop. wasm-validate refuses it; a host that
;; appended its own state after the module's globals (as this host once
;; did) gave the guest that state, the time-limit counter, and a guest
;; resetting it was never stopped: the call, Host.Close and, at the next
;; garbage collection, the whole process froze.
;; Expected: refused at load as malformed ("global index 1 out of range"),
;; never run.
(module
  ;;@describe
  (memory 1)
  (data (i32.const 0) "{\"tools\":[{\"name\":\"fuelreach\",\"description\":\"A hostile test tool.\",\"inputSchema\":{\"type\":\"object\"}}]}\00")
  (global $mine (mut i32) (i32.const 0))
  (func (export "call") (result i32)
    (loop $forever
      (global.set 1 (i32.const 10000))
      (br $forever))
    (i32.const 0)))
