;; Traps on every third call into it: prefilter, filter and score each count one call (per instance: a trap
;; discards the instance, and its replacement counts from zero). Filter passes, Score is 10.
(module
  (memory (export "memory") 1)
  (global $calls (export "calls") (mut i32) (i32.const 0))
  (func $tick
    (global.set $calls (i32.add (global.get $calls) (i32.const 1)))
    (if (i32.eqz (i32.rem_u (global.get $calls) (i32.const 3))) (then unreachable)))
  (func (export "prefilter") (result i32) (call $tick) (i32.const 0))
  (func (export "filter") (result i32) (call $tick) (i32.const 0))
  (func (export "score") (result i64) (call $tick) (i64.const 0xa_0000_0000))  ;; 10, Success
)
