;; inits: the initialisers an Extism host runs on a new instance, in the
;; order it runs them. `_initialize` takes a parameter here, so it is not
;; the runtime's initialiser and the host runs `__wasm_call_ctors`
;; instead; `hs_init(argc, argv)` (GHC's) runs after it. Each initialiser
;; records its turn at address 256 (one byte per turn), and the tool
;; `inits` outputs what was recorded: "ch" when both ran in that order.
(module
  ;;@describe
  (memory (export "memory") 1)
  (data (i32.const 0) "{\"tools\":[{\"name\":\"inits\",\"description\":\"Reports which initialisers ran.\",\"inputSchema\":{\"type\":\"object\"}}]}\00")
  (global $turn (mut i32) (i32.const 0))
  (func $record (param $c i32)
    (i32.store8 (i32.add (i32.const 256) (global.get $turn)) (local.get $c))
    (global.set $turn (i32.add (global.get $turn) (i32.const 1))))
  (func (export "_initialize") (param i32) (call $record (i32.const 105))) ;; 'i'
  (func (export "__wasm_call_ctors") (call $record (i32.const 99)))        ;; 'c'
  (func (export "hs_init") (param i32 i32) (call $record (i32.const 104))) ;; 'h'
  (func (export "call") (result i32)
    (call $output (i32.const 256) (global.get $turn))
    (i32.const 0)))
