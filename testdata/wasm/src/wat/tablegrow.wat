;; tablegrow: grows its table by 2^28 entries (2 GiB of host memory at 8
;; bytes an entry) in one table.grow, then by 2^16 at a time in a loop.
;; Tables live outside linear memory, so a host that bounded only memory
;; let this reach gigabytes, and one 16 GiB grow killed the process
;; ("fatal error: out of memory").
;; Expected: every grow past Limits.Tables returns -1 as the specification
;; allows; the call succeeds with the table's size as its text, at most the
;; limit (1 Mi entries by default).
(module
  ;;@describe
  (memory 1)
  (data (i32.const 0) "{\"tools\":[{\"name\":\"tablegrow\",\"description\":\"A hostile test tool.\",\"inputSchema\":{\"type\":\"object\"}}]}\00")
  (data (i32.const 1024) "{\"content\":[{\"type\":\"text\",\"text\":\"")
  (data (i32.const 2048) "\"}]}")
  (table $t 1 funcref)
  (func (export "call") (result i32)
    (local $i i32) (local $n i32) (local $p i32)
    (drop (table.grow $t (ref.null func) (i32.const 0x10000000)))
    (block $done
      (loop $more
        (br_if $done (i32.eq (table.grow $t (ref.null func) (i32.const 0x10000)) (i32.const -1)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br_if $more (i32.lt_u (local.get $i) (i32.const 4096)))))
    ;; Output the table's size in decimal (written backwards from 2048),
    ;; as a text result: the result's prefix goes just before the digits.
    (local.set $n (table.size $t))
    (local.set $p (i32.const 2048))
    (loop $digit
      (local.set $p (i32.sub (local.get $p) (i32.const 1)))
      (i32.store8 (local.get $p) (i32.add (i32.const 48) (i32.rem_u (local.get $n) (i32.const 10))))
      (local.set $n (i32.div_u (local.get $n) (i32.const 10)))
      (br_if $digit (local.get $n)))
    (local.set $p (i32.sub (local.get $p) (i32.const 35)))
    (memory.copy (local.get $p) (i32.const 1024) (i32.const 35))
    (call $output (local.get $p) (i32.sub (i32.const 2052) (local.get $p)))
    (i32.const 0)))
