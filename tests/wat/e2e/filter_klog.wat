;; Logs through klog in every filter call: an Info line "filtering" and a Warning line "careful"
;; (both with plugin="<name>" added by the host); every node passes.
(module
  (import "k8s.io/klog" "log" (func $log (param i32 i32 i32)))
  (memory (export "memory") 1 1)
  (data (i32.const 0) "filtering")
  (data (i32.const 16) "careful")
  (func (export "filter") (result i32)
    (call $log (i32.const 0) (i32.const 0) (i32.const 9))
    (call $log (i32.const 1) (i32.const 16) (i32.const 7))
    (i32.const 0))
)
