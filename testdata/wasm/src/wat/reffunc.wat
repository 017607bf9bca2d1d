;; reffunc: ref.func in a loop without end. wazero keeps a record for
;; every ref.func an instance runs until the instance closes, outside the
;; memory limit: this loop grew the host by 1.1 GB in one 10 s call (and
;; with Module.Reuse, without bound across calls). The rewrite charges each
;; ref.func to the stack budget, never given back, so the call ends at the
;; stack limit after 8 MiB / 64 of them.
(module
  ;;@describe
  (memory 1)
  (data (i32.const 0) "{\"tools\":[{\"name\":\"reffunc\",\"description\":\"Takes function references without end.\",\"inputSchema\":{\"type\":\"object\"}}]}\00")
  (func $f)
  (elem declare func $f)
  ;; A function whose first instruction is a ref.func: its charge then
  ;; opens the body, where a function that calls has its stack entry,
  ;; and the verifier must tell the two apart.
  (func $first (result funcref) (ref.func $f))
  (func (export "call") (result i32)
    (loop $l
      (drop (ref.func $f))
      (br $l))
    (i32.const 0)))
