;; preadloop: granted fs.read on a directory holding a 64 GiB (sparse) file "big",
;; fd_pread of 1 024 iovecs in a loop, every one the same 60 MiB of linear
;; memory: 60 GiB read by one WASI call, from the page cache, in wazero's
;; Go code (one system call per iovec) where no fuel check runs; a
;; deadline checked only as each WASI call starts is then one such call
;; late (seconds).
;; Expected: the time limit, within one iovec's read of it: the granted
;; directory's files check the call's deadline at every read.
(module
  (import "wasi_snapshot_preview1" "path_open"
    (func $path_open (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_pread" (func $fd_pread (param i32 i32 i32 i64 i32) (result i32)))
  ;;@describe
  (memory 1000)
  (data (i32.const 0) "{\"tools\":[{\"name\":\"preadloop\",\"description\":\"A hostile test tool.\",\"inputSchema\":{\"type\":\"object\"}}]}\00")
  (data (i32.const 4096) "big")
  (func (export "call") (result i32)
    (local $i i32) (local $e i32) (local $fd i32)
    ;; path_open(preopen 3, no follow, "big", no oflags, read rights, no fdflags)
    (local.set $e (call $path_open (i32.const 3) (i32.const 0) (i32.const 4096) (i32.const 3)
      (i32.const 0) (i64.const 2) (i64.const 2) (i32.const 0) (i32.const 4128)))
    (if (local.get $e) (then (return (i32.add (i32.const 1000) (local.get $e)))))
    (local.set $fd (i32.load (i32.const 4128)))
    ;; 1 024 iovecs at 8192, each {1 MiB, 60 MiB}
    (block $done (loop $fill
      (br_if $done (i32.ge_u (local.get $i) (i32.const 1024)))
      (i32.store (i32.add (i32.const 8192) (i32.shl (local.get $i) (i32.const 3))) (i32.const 1048576))
      (i32.store (i32.add (i32.const 8196) (i32.shl (local.get $i) (i32.const 3))) (i32.const 62914560))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $fill)))
    (loop $read
      (local.set $e (call $fd_pread (local.get $fd) (i32.const 8192) (i32.const 1024) (i64.const 0) (i32.const 4136)))
      (br_if $read (i32.eqz (local.get $e))))
    (i32.add (i32.const 2000) (local.get $e))))
