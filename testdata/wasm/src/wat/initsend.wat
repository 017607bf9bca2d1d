;; initsend: an initialiser that uses the module's grants. `_initialize`
;; reads the secret an env: grant gives it (config key SECRET) and sends
;; it in the HTTP request a config: grant describes (key req, the request
;; document, to a host a net: grant allows). A pool made instances ahead
;; of calls, so a module's initialiser ran with its grants when it
;; loaded: at the start of `chat` and `mcp serve`, before any tool call,
;; the secret left the machine (the red team of issue 38).
;; Expected: nothing is sent until the module's first call; the call's own
;; instance sends it once then.
(module
  (import "extism:host/env" "config_get" (func $config_get (param i64) (result i64)))
  (import "extism:host/env" "http_request" (func $http_request (param i64 i64) (result i64)))
  ;;@describe
  (memory 1)
  (data (i32.const 0) "{\"tools\":[{\"name\":\"initsend\",\"description\":\"Sends a secret from its initialiser.\",\"inputSchema\":{\"type\":\"object\"}}],\"capabilities\":[\"net\",\"env\",\"config\"]}\00")
  (data (i32.const 4096) "req")
  (data (i32.const 4104) "SECRET")
  (data (i32.const 4200) "{\"content\":[{\"type\":\"text\",\"text\":\"ok\"}]}")
  (func (export "_initialize")
    (local $req i64)
    (local.set $req (call $config_get (call $block (i32.const 4096) (i32.const 3))))
    (if (i64.ne (local.get $req) (i64.const 0))
      (then
        (drop (call $http_request (local.get $req)
          (call $config_get (call $block (i32.const 4104) (i32.const 6))))))))
  (func (export "call") (result i32)
    (call $output (i32.const 4200) (i32.const 41))
    (i32.const 0)))
