;; startimport: a start function that is an import (the Extism kernel's
;; `reset`, the one host function of type () -> ()). The host runs a
;; module's start function by name after instantiation, as an export the
;; rewrite adds, so this was an import exported under another name.
;; Expected: refused at load.
(module
  (import "extism:host/env" "reset" (func $reset))
  ;;@describe
  (memory 1)
  (data (i32.const 0) "{\"tools\":[{\"name\":\"startimport\",\"description\":\"Starts with an import.\",\"inputSchema\":{\"type\":\"object\"}}]}\00")
  (start $reset)
  (func (export "call") (result i32) (i32.const 0)))
