;; Item 24: prefilter sends result.node_names by global variant: 0 nothing, 1 "a\0b\0", 2 "a\0\0b"; returns Success.
(module
  (import "k8s.io/scheduler" "result.node_names" (func $node_names (param i32 i32)))
  (memory (export "memory") 1 1)
  (data (i32.const 0) "a\00b\00")
  (data (i32.const 16) "a\00\00b")
  (global $variant (export "variant") (mut i32) (i32.const 0))
  (global $calls (export "calls") (mut i32) (i32.const 0))
  (func (export "prefilter") (result i32)
    (global.set $calls (i32.add (global.get $calls) (i32.const 1)))
    (if (i32.eq (global.get $variant) (i32.const 1)) (then (call $node_names (i32.const 0) (i32.const 4))))
    (if (i32.eq (global.get $variant) (i32.const 2)) (then (call $node_names (i32.const 16) (i32.const 4))))
    (i32.const 0))
)
