;; scoperecursion: recursion without end whose call sits in a block the
;; rewrite charges (not a wrapper around the body), left by a return that
;; follows the call, with a return before the block that is never taken.
;; The charge before the block must bound the depth, and the give-back
;; before the inner return must not undo it: the call must end at the
;; stack limit, with little host memory, as recursion.wasm does.
(module
  ;;@describe
  (memory 1)
  (data (i32.const 0) "{\"tools\":[{\"name\":\"scoperecursion\",\"description\":\"Recurses without end from inside a charged block.\",\"inputSchema\":{\"type\":\"object\"}}]}\00")
  (func $down (param $n i32) (result i32)
    (if (i32.lt_s (local.get $n) (i32.const 0)) (then (return (i32.const 0))))
    (block $b
      (br_if $b (i32.eq (local.get $n) (i32.const -5)))
      (return (i32.add (i32.const 1)
        (call $down (i32.add (local.get $n) (i32.const 1))))))
    (i32.const 0))
  (func (export "call") (result i32)
    (drop (call $down (i32.const 0)))
    (i32.const 0)))
