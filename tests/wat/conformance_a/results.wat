;; Configurable results (items 19-23): filter returns global ret32; score/postfilter/permit return ret64; reason != 0 sends "a != b"; nominate != 0 makes postfilter nominate "n1"; calls counts calls.
(module
  (import "k8s.io/scheduler" "result.status_reason" (func $status_reason (param i32 i32)))
  (import "k8s.io/scheduler" "result.nominated_node_name" (func $nominated (param i32 i32)))
  (memory (export "memory") 1 1)
  (data (i32.const 0) "a != b")
  (data (i32.const 16) "n1")
  (global $ret32 (export "ret32") (mut i32) (i32.const 0))
  (global $ret64 (export "ret64") (mut i64) (i64.const 0))
  (global $reason (export "reason") (mut i32) (i32.const 0))
  (global $nominate (export "nominate") (mut i32) (i32.const 0))
  (global $calls (export "calls") (mut i32) (i32.const 0))

  (func $enter
    (global.set $calls (i32.add (global.get $calls) (i32.const 1)))
    (if (global.get $reason) (then (call $status_reason (i32.const 0) (i32.const 6)))))

  (func (export "filter") (result i32) (call $enter) (global.get $ret32))
  (func (export "score") (result i64) (call $enter) (global.get $ret64))
  (func (export "postfilter") (result i64)
    (call $enter)
    (if (global.get $nominate) (then (call $nominated (i32.const 16) (i32.const 2))))
    (global.get $ret64))
  (func (export "permit") (result i64) (call $enter) (global.get $ret64))
)
