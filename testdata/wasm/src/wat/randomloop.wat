;; randomloop: random_get of 60 MiB, in a loop. wazero's WASI functions are
;; its own Go code, which checked no deadline: each call took 45 ms (240 ms
;; with the random grant) and counted as one unit of fuel, so the guest ran
;; minutes past its limit, and the watchdog, seeing no exit to the host,
;; disabled the module as if its instrumentation had failed.
;; Expected: the time limit; every WASI call checks the deadline first.
(module
  (import "wasi_snapshot_preview1" "random_get" (func $random_get (param i32 i32) (result i32)))
  ;;@describe
  (memory 1000)
  (data (i32.const 0) "{\"tools\":[{\"name\":\"randomloop\",\"description\":\"A hostile test tool.\",\"inputSchema\":{\"type\":\"object\"}}]}\00")
  (func (export "call") (result i32)
    (loop $l
      (drop (call $random_get (i32.const 65536) (i32.const 62914560)))
      (br $l))
    (i32.const 0)))
