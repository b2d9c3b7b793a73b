;; Item 27: filter never returns (an endless loop); only the per-call timeout stops it.
(module
  (memory (export "memory") 1 1)
  (func (export "filter") (result i32)
    (loop $forever (br $forever))
    (i32.const 0))
)
