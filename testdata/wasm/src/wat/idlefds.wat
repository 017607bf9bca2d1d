;; idlefds: a start function that opens the granted directory (the first
;; preopen, fd 3) 100 times and keeps the files open. Instances a pool
;; makes ahead of calls keep them while idle, outside any call: three such
;; modules at the default pool size held 600 files, and enough of them
;; exhausted the process's file limit. The call outputs how many opened.
(module
  (import "wasi_snapshot_preview1" "path_open"
    (func $path_open (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))
  ;;@describe
  (memory 1)
  (data (i32.const 0) "{\"tools\":[{\"name\":\"idlefds\",\"description\":\"Holds files its start opened.\",\"inputSchema\":{\"type\":\"object\"}}]}\00")
  (data (i32.const 4096) ".")
  (data (i32.const 4200) "{\"content\":[{\"type\":\"text\",\"text\":\"ok\"}]}")
  (global $opened (mut i32) (i32.const 0))
  (func $hog
    (block $done
      (loop $open
        (br_if $done (i32.ge_u (global.get $opened) (i32.const 100)))
        ;; path_open(fd 3, no lookup flags, ".", O_DIRECTORY, read rights, fd out at 8192)
        (br_if $done (call $path_open (i32.const 3) (i32.const 0) (i32.const 4096) (i32.const 1)
          (i32.const 2) (i64.const 0x4002) (i64.const 0x4002) (i32.const 0) (i32.const 8192)))
        (global.set $opened (i32.add (global.get $opened) (i32.const 1)))
        (br $open))))
  (start $hog)
  (func (export "call") (result i32)
    (call $output (i32.const 4200) (i32.const 41))
    (i32.const 0)))
