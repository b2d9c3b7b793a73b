;; `filter` logs "looping" (klog Info) and then sleeps an hour in poll_oneoff (one relative clock
;; subscription on the monotonic clock): with `timeout: 0s` only Ctrl-C ends it.
(module
  (import "k8s.io/klog" "log" (func $log (param i32 i32 i32)))
  (import "wasi_snapshot_preview1" "poll_oneoff" (func $poll (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1 1)
  (data (i32.const 0) "looping")
  (func (export "filter") (result i32)
    (call $log (i32.const 0) (i32.const 0) (i32.const 7))
    ;; subscription at 64: userdata 0, tag 0 (clock) at 72, clock id 1 at 80, timeout (ns) at 88
    (i32.store8 (i32.const 72) (i32.const 0))
    (i32.store (i32.const 80) (i32.const 1))
    (i64.store (i32.const 88) (i64.const 3600000000000))
    (drop (call $poll (i32.const 64) (i32.const 128) (i32.const 1) (i32.const 192)))
    (i32.const 0))
)
