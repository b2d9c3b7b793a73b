;; docs/abi.md §14.5: postfilter reads the pods nominated to n1 (into 4096..) and runs the profile's
;; filters with them on the node named at 64 (into 8192..); filter rejects every node.
(module
  (import "k8s.io/scheduler" "handle.nominated_pods_for_node" (func $nominated (param i32 i32 i32 i32) (result i32)))
  (import "k8s.io/scheduler" "handle.run_filter_plugins_with_nominated_pods"
    (func $run_filters (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 32) "n1")
  (data (i32.const 64) "n1")
  (global $node_len (export "node_len") (mut i32) (i32.const 2))
  (global $nom_len (export "nom_len") (mut i32) (i32.const -1))
  (global $rf_len (export "rf_len") (mut i32) (i32.const -1))
  (func (export "filter") (result i32) (i32.const 2))
  (func (export "postfilter") (result i64)
    (global.set $nom_len (call $nominated (i32.const 32) (i32.const 2) (i32.const 4096) (i32.const 4000)))
    (global.set $rf_len (call $run_filters (i32.const 64) (global.get $node_len) (i32.const 8192) (i32.const 4000)))
    (i64.const 0)))
