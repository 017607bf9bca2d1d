;; tabledeclared: declares a table of 100 million entries (800 MB of host
;; memory allocated at instantiation, outside linear memory).
;; Expected: refused at load with the table limit named, never instantiated.
(module
  ;;@describe
  (memory 1)
  (data (i32.const 0) "{\"tools\":[{\"name\":\"tabledeclared\",\"description\":\"A hostile test tool.\",\"inputSchema\":{\"type\":\"object\"}}]}\00")
  (table 100000000 funcref)
  (func (export "call") (result i32) (i32.const 0)))
