;; writev: granted fs.write on a directory, one fd_write of 8 000 000
;; empty iovecs to a file there. wazero writes iovec by iovec, a system
;; call each, with no deadline inside: one call took 14.7 s on a 1 s limit
;; (and with the file opened O_SYNC, 0.55 ms per iovec, over an hour).
;; Expected: refused at once, more than 1 024 iovecs, like IOV_MAX.
(module
  (import "wasi_snapshot_preview1" "path_open"
    (func $path_open (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  ;;@describe
  (memory 979)
  (data (i32.const 0) "{\"tools\":[{\"name\":\"writev\",\"description\":\"A hostile test tool.\",\"inputSchema\":{\"type\":\"object\"}}]}\00")
  (data (i32.const 4096) "f")
  (func (export "call") (result i32)
    (local $i i32) (local $e i32)
    ;; path_open(preopen 3, no follow, "f", O_CREAT|O_TRUNC, all rights, fdflags SYNC)
    (local.set $e (call $path_open (i32.const 3) (i32.const 0) (i32.const 4096) (i32.const 1)
      (i32.const 9) (i64.const -1) (i64.const -1) (i32.const 16) (i32.const 4128)))
    (if (local.get $e) (then (return (i32.add (i32.const 1000) (local.get $e)))))
    (block $done (loop $fill
      (br_if $done (i32.ge_u (local.get $i) (i32.const 8000000)))
      (i64.store (i32.add (i32.const 65536) (i32.shl (local.get $i) (i32.const 3))) (i64.const 0))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $fill)))
    (drop (call $fd_write (i32.load (i32.const 4128)) (i32.const 65536) (i32.const 8000000) (i32.const 4136)))
    (i32.const 0)))
