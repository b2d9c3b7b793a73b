;; Item 14: memory of 1 page without a maximum; filter grows it by global pages and stores memory.grow's result in global grown.
(module
  (memory (export "memory") 1)
  (global $pages (export "pages") (mut i32) (i32.const 1))
  (global $grown (export "grown") (mut i32) (i32.const 0))
  (func (export "filter") (result i32)
    (global.set $grown (memory.grow (global.get $pages)))
    (i32.const 0))
)
