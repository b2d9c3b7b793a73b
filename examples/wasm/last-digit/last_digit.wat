;; Scores a node 10 x the last digit of its name (node-7 -> 70); names without a digit score 0.
;; Filter rejects nodes whose name ends in 0 with reason "node name ends in 0".
(module
  (import "k8s.io/scheduler" "currentNodeName" (func $current_node_name (param i32 i32) (result i32)))
  (import "k8s.io/scheduler" "result.status_reason" (func $status_reason (param i32 i32)))
  (memory (export "memory") 1 1)
  (data (i32.const 0) "node name ends in 0")

  ;; last byte of the current node name as a digit, or -1
  (func $last_digit (result i32)
    (local $n i32) (local $c i32)
    (local.set $n (call $current_node_name (i32.const 1024) (i32.const 256)))
    (if (i32.or (i32.eqz (local.get $n)) (i32.gt_u (local.get $n) (i32.const 256)))
      (then (return (i32.const -1))))
    (local.set $c (i32.load8_u (i32.add (i32.const 1023) (local.get $n))))
    (if (i32.or (i32.lt_u (local.get $c) (i32.const 48)) (i32.gt_u (local.get $c) (i32.const 57)))
      (then (return (i32.const -1))))
    (i32.sub (local.get $c) (i32.const 48)))

  (func (export "filter") (result i32)
    (if (i32.eqz (call $last_digit))
      (then
        (call $status_reason (i32.const 0) (i32.const 19))
        (return (i32.const 2))))
    (i32.const 0))

  (func (export "score") (result i64)
    (local $d i32)
    (local.set $d (call $last_digit))
    (if (i32.lt_s (local.get $d) (i32.const 0)) (then (local.set $d (i32.const 0))))
    (i64.shl (i64.extend_i32_u (i32.mul (local.get $d) (i32.const 10))) (i64.const 32)))
)
