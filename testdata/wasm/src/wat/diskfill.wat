;; diskfill: granted fs.write on a directory, creates "big" and appends
;; 1 MiB writes until a write fails. Nothing bounded the disk a call
;; fills: 256 MiB took 0.7 s, about 3.5 GB in one 10 s call.
;; Expected: the write past Limits.FSWrite ends the call with "tool
;; exceeded its fs write limit of …", the file no larger than the limit.
(module
  (import "wasi_snapshot_preview1" "path_open"
    (func $path_open (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  ;;@describe
  (memory 17)
  (data (i32.const 0) "{\"tools\":[{\"name\":\"diskfill\",\"description\":\"A hostile test tool.\",\"inputSchema\":{\"type\":\"object\"}}]}\00")
  (data (i32.const 4096) "big")
  (func (export "call") (result i32)
    (local $fd i32)
    ;; path_open(preopen 3, no follow, "big", O_CREAT|O_TRUNC, all rights)
    (if (call $path_open (i32.const 3) (i32.const 0) (i32.const 4096) (i32.const 3)
          (i32.const 9) (i64.const -1) (i64.const -1) (i32.const 0) (i32.const 4128))
      (then (return (i32.const 1))))
    (local.set $fd (i32.load (i32.const 4128)))
    ;; one iovec at 4144: 1 MiB from 64 KiB
    (i32.store (i32.const 4144) (i32.const 65536))
    (i32.store (i32.const 4148) (i32.const 1048576))
    (block $done (loop $more
      (br_if $done (call $fd_write (local.get $fd) (i32.const 4144) (i32.const 1) (i32.const 4160)))
      (br $more)))
    (i32.const 2)))
