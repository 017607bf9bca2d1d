;; scopes: one function of each shape the rewrite charges to the stack
;; budget differently (host/internal/rewrite, "Stack"; RATIONALE.md "Where
;; does a function pay its stack budget?"), and a call that runs them and
;; checks what they compute, so the charged block changes nothing a guest
;; can observe. The call outputs the text "ok", or traps (unreachable) at
;; the first wrong result. rewrite's TestScopeChoice checks which block
;; each gets.
(module
  ;;@describe
  (memory 1)
  (data (i32.const 0) "{\"tools\":[{\"name\":\"scopes\",\"description\":\"Runs a function of every charged-block shape and checks its results.\",\"inputSchema\":{\"type\":\"object\"}}]}\00")
  (data (i32.const 400) "{\"content\":[{\"type\":\"text\",\"text\":\"ok\"}]}")
  ;; A leaf: it calls nothing, so it is charged nothing.
  (func $id (param i32) (result i32) (local.get 0))
  ;; fib as clang compiles it: its calls sit in a loop inside a block that
  ;; its base case leaves first. The loop is charged.
  (func $fib (param $n i64) (result i64)
    (local $acc i64)
    (block $base
      (br_if $base (i64.lt_u (local.get $n) (i64.const 2)))
      (loop $more
        (local.set $acc (i64.add (local.get $acc)
          (call $fib (i64.sub (local.get $n) (i64.const 1)))))
        (local.set $n (i64.sub (local.get $n) (i64.const 2)))
        (br_if $more (i64.gt_u (local.get $n) (i64.const 1)))))
    (i64.add (local.get $n) (local.get $acc)))
  ;; Its call sits in a block inside a loop: the loop is charged (once per
  ;; call of the function), not the block (once per iteration).
  (func $oddsum (param $n i32) (result i32)
    (local $s i32)
    (loop $next
      (block $even
        (br_if $even (i32.eqz (i32.and (local.get $n) (i32.const 1))))
        (local.set $s (i32.add (local.get $s) (call $id (local.get $n)))))
      (local.set $n (i32.sub (local.get $n) (i32.const 1)))
      (br_if $next (i32.gt_s (local.get $n) (i32.const 0))))
    (local.get $s))
  ;; A return before the charged block, one inside it (the budget is
  ;; given back first) and a branch to the block's own label.
  (func $early (param $n i32) (result i32)
    (if (i32.lt_s (local.get $n) (i32.const 0)) (then (return (i32.const -1))))
    (block $work
      (br_if $work (i32.gt_s (local.get $n) (i32.const 100)))
      (if (i32.eqz (local.get $n)) (then (return (call $id (i32.const 7)))))
      (local.set $n (call $id (local.get $n))))
    (i32.add (local.get $n) (i32.const 1)))
  ;; A branch from the block that holds its calls to the function's own
  ;; label: no block fits, so the whole body is wrapped and charged.
  (func $escape (param $n i32) (result i32)
    (block $out
      (drop (br_if 1 (local.get $n) (i32.eqz (local.get $n))))
      (local.set $n (call $id (local.get $n)))
      (local.set $n (call $id (i32.add (local.get $n) (i32.const 1)))))
    (local.get $n))
  ;; Calls in both arms of an if: the if is charged, after its condition.
  (func $cond (param $n i32) (result i32)
    (i32.add (i32.const 1)
      (if (result i32) (i32.gt_s (local.get $n) (i32.const 10))
        (then (call $id (local.get $n)))
        (else (call $id (i32.const 10))))))
  (func $check (param $ok i32)
    (if (i32.eqz (local.get $ok)) (then unreachable)))
  (func (export "call") (result i32)
    (call $check (i64.eq (call $fib (i64.const 20)) (i64.const 6765)))
    (call $check (i64.eq (call $fib (i64.const 1)) (i64.const 1)))
    (call $check (i32.eq (call $oddsum (i32.const 10)) (i32.const 25)))
    (call $check (i32.eq (call $early (i32.const -5)) (i32.const -1)))
    (call $check (i32.eq (call $early (i32.const 0)) (i32.const 7)))
    (call $check (i32.eq (call $early (i32.const 5)) (i32.const 6)))
    (call $check (i32.eq (call $early (i32.const 500)) (i32.const 501)))
    (call $check (i32.eq (call $escape (i32.const 0)) (i32.const 0)))
    (call $check (i32.eq (call $escape (i32.const 3)) (i32.const 4)))
    (call $check (i32.eq (call $cond (i32.const 3)) (i32.const 11)))
    (call $check (i32.eq (call $cond (i32.const 20)) (i32.const 21)))
    (call $output (i32.const 400) (i32.const 41))
    (i32.const 0)))
