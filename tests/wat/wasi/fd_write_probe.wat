;; Calls fd_write from `filter` with arguments the test sets in globals (the test writes the iovecs
;; into memory); `trap` = 1 traps afterwards, so the captured output shows in the error text.
(module
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 2 2)
  (global $fd (export "fd") (mut i32) (i32.const 1))
  (global $iovs (export "iovs") (mut i32) (i32.const 256))
  (global $iovs_len (export "iovs_len") (mut i32) (i32.const 1))
  (global $nwritten (export "nwritten") (mut i32) (i32.const 512))
  (global $errno (export "errno") (mut i32) (i32.const -1))
  (global $trap (export "trap") (mut i32) (i32.const 0))
  (func (export "filter") (result i32)
    (global.set $errno
      (call $fd_write (global.get $fd) (global.get $iovs) (global.get $iovs_len) (global.get $nwritten)))
    (if (global.get $trap) (then unreachable))
    (i32.const 0))
)
