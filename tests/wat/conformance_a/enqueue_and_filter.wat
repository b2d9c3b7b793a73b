;; Item 15: enqueue sends {Node, Add} and counts its calls in global enqueues; filter returns Success and counts in filters.
(module
  (import "k8s.io/scheduler" "result.cluster_events" (func $cluster_events (param i32 i32)))
  (memory (export "memory") 1 1)
  (data (i32.const 0) "\01\00\00\00\01\00\00\00")
  (global $enqueues (export "enqueues") (mut i32) (i32.const 0))
  (global $filters (export "filters") (mut i32) (i32.const 0))
  (func (export "enqueue")
    (global.set $enqueues (i32.add (global.get $enqueues) (i32.const 1)))
    (call $cluster_events (i32.const 0) (i32.const 8)))
  (func (export "filter") (result i32)
    (global.set $filters (i32.add (global.get $filters) (i32.const 1)))
    (i32.const 0))
)
