;; `filter` logs "looping" (klog Info) and then loops forever: with `timeout: 0s` only Ctrl-C ends it.
(module
  (import "k8s.io/klog" "log" (func $log (param i32 i32 i32)))
  (memory (export "memory") 1 1)
  (data (i32.const 0) "looping")
  (func (export "filter") (result i32)
    (call $log (i32.const 0) (i32.const 0) (i32.const 7))
    (loop $forever (br $forever))
    (i32.const 0))
)
