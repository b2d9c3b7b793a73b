;; Item 16: exports only filter, which increments the exported global filter_calls and returns Success.
(module
  (memory (export "memory") 1 1)
  (global $filter_calls (export "filter_calls") (mut i32) (i32.const 0))
  (func (export "filter") (result i32)
    (global.set $filter_calls (i32.add (global.get $filter_calls) (i32.const 1)))
    (i32.const 0))
)
