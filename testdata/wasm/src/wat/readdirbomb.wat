;; readdirbomb: under an fs.read grant of a directory of 20 000 files, opens
;; the directory 250 times and calls fd_readdir once on each with a buffer
;; length of 4 GiB. wazero asked for as many entries as such a buffer could
;; hold (an lstat each), in one WASI call, and kept them all per open
;; directory outside the memory limit: 250 descriptors of a directory of
;; 200 000 files held 769 MB (found by attacking our own sandbox).
;; Expected: each fd_readdir reads at most 1 024 entries; the call returns
;; "done" with the child's memory small.
(module
  (import "wasi_snapshot_preview1" "path_open"
    (func $path_open (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_readdir"
    (func $readdir (param i32 i32 i32 i64 i32) (result i32)))
  ;;@describe
  (memory 1)
  (data (i32.const 0) "{\"tools\":[{\"name\":\"readdirbomb\",\"description\":\"A hostile test tool.\",\"inputSchema\":{\"type\":\"object\"}}]}\00")
  (data (i32.const 2048) ".")
  (data (i32.const 2200) "{\"content\":[{\"type\":\"text\",\"text\":\"done\"}]}")
  (func (export "call") (result i32)
    (local $i i32)
    (loop $again
      ;; path_open(3, 0, ".", 1, O_DIRECTORY, no rights (read only), 0, &fd at 2100)
      (if (i32.eqz (call $path_open (i32.const 3) (i32.const 0) (i32.const 2048) (i32.const 1)
            (i32.const 2) (i64.const 0) (i64.const 0) (i32.const 0) (i32.const 2100)))
        (then
          (drop (call $readdir (i32.load (i32.const 2100)) (i32.const 4096) (i32.const 0xffffff00)
            (i64.const 0) (i32.const 2104)))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $again (i32.lt_u (local.get $i) (i32.const 250))))
    (call $output (i32.const 2200) (i32.const 43))
    (i32.const 0)))
