;; notifyflood: 3000 notify_progress and 3000 notify_resource_updated
;; notifications in one call, 64 bytes each. They need no grant; the host
;; logs them at debug level, and they count against the call's 1000 logs
;; as log_* does (they once did not: one call wrote 1.7 GB of log lines).
(module
  (import "extism:host/user" "notify_progress" (func $progress (param i64)))
  (import "extism:host/user" "notify_resource_updated" (func $updated (param i64)))
  ;;@describe
  (memory 1)
  (data (i32.const 0) "{\"tools\":[{\"name\":\"notifyflood\",\"description\":\"Sends 6000 notifications.\",\"inputSchema\":{\"type\":\"object\"}}]}\00")
  (data (i32.const 600) "{\"content\":[{\"type\":\"text\",\"text\":\"ok\"}]}")
  (data (i32.const 512) "{\"progressToken\":\"t\",\"progress\":1,\"total\":3000,\"message\":\"...\"}")
  (func (export "call") (result i32)
    (local $b i64) (local $i i32)
    (local.set $b (call $block (i32.const 512) (i32.const 64)))
    (loop $l
      (call $progress (local.get $b))
      (call $updated (local.get $b))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $l (i32.lt_u (local.get $i) (i32.const 3000))))
    (call $output (i32.const 600) (i32.const 41))
    (i32.const 0)))
