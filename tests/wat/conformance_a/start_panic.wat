;; Item 11: _start prints "panic!" to stderr, then hits unreachable, so instantiation fails.
(module
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1 1)
  (data (i32.const 0) "panic!")
  (func (export "_start")
    (i32.store (i32.const 100) (i32.const 0))
    (i32.store (i32.const 104) (i32.const 6))
    (drop (call $fd_write (i32.const 2) (i32.const 100) (i32.const 1) (i32.const 108)))
    unreachable)
  (func (export "filter") (result i32) (i32.const 0))
)
