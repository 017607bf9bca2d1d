;; looprecursion: recursion without end whose call sits in a loop. Such a
;; function has no fuel check of its own (the loop's check pays for its
;; few instructions outside the loop, one check per call instead of two),
;; so only its stack budget charge bounds the depth: the call must end at
;; the stack limit, with little host memory, as recursion.wasm does.
(module
  ;;@describe
  (memory 1)
  (data (i32.const 0) "{\"tools\":[{\"name\":\"looprecursion\",\"description\":\"Recurses without end from inside a loop.\",\"inputSchema\":{\"type\":\"object\"}}]}\00")
  (func $down (param $n i32) (result i32)
    (local $sum i32)
    (loop $l
      (local.set $sum
        (i32.add (local.get $sum)
          (call $down (i32.add (local.get $n) (i32.const 1)))))
      (br_if $l (i32.lt_u (local.get $sum) (i32.const 2))))
    (local.get $sum))
  (func (export "call") (result i32)
    (drop (call $down (i32.const 0)))
    (i32.const 0)))
