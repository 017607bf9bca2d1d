;; scratchreach: INVALID as written. A function with a bulk instruction
;; (which the host charges fuel for through a scratch local it appends)
;; also reads local 1, one past its only local: a rewrite that appended the
;; scratch local without validating first would hand it to the guest.
;; Expected: refused at load as malformed ("local index 1 out of range").
(module
  ;;@describe
  (memory 1)
  (data (i32.const 0) "{\"tools\":[{\"name\":\"scratchreach\",\"description\":\"A hostile test tool.\",\"inputSchema\":{\"type\":\"object\"}}]}\00")
  (func (export "call") (result i32)
    (local $n i32)
    (memory.fill (i32.const 1024) (i32.const 0) (local.get $n))
    (local.get 1)))
