;; sparse: granted fs.write on a directory, writes one byte at offset 2^40
;; of a new file, and again in new files. Writes were charged their length
;; only: each call left files of a terabyte each (4 KiB on disk, in full
;; for whoever copies them) for 4 KiB of the write limit.
;; Expected: the hole counts as written, so the first such write ends the
;; call with "tool exceeded its fs write limit of …"; no file grows past it.
(module
  (import "wasi_snapshot_preview1" "path_open"
    (func $path_open (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_pwrite" (func $fd_pwrite (param i32 i32 i32 i64 i32) (result i32)))
  ;;@describe
  (memory 1)
  (data (i32.const 0) "{\"tools\":[{\"name\":\"sparse\",\"description\":\"A hostile test tool.\",\"inputSchema\":{\"type\":\"object\"}}]}\00")
  (data (i32.const 4096) "sparse.bin")
  (func (export "call") (result i32)
    ;; path_open(preopen 3, no follow, "sparse.bin", O_CREAT|O_TRUNC, all rights)
    (if (call $path_open (i32.const 3) (i32.const 0) (i32.const 4096) (i32.const 10)
          (i32.const 9) (i64.const -1) (i64.const -1) (i32.const 0) (i32.const 4128))
      (then (return (i32.const 1))))
    ;; one iovec at 4144: the byte at 4160
    (i32.store (i32.const 4144) (i32.const 4160))
    (i32.store (i32.const 4148) (i32.const 1))
    (drop (call $fd_pwrite (i32.load (i32.const 4128)) (i32.const 4144) (i32.const 1)
      (i64.const 1099511627775) (i32.const 4152)))
    (i32.const 2)))
