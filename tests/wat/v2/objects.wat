;; docs/abi.md §14.2: filter lists NodeResourceTopologies with a label selector (query at 1024, value
;; at 8192), gets n1 (query at 2048, value at 16384), and, when the global $undeclared is set, lists
;; namespaces, which its args do not watch.
(module
  (import "k8s.io/scheduler" "handle.objects.list" (func $list (param i32 i32 i32 i32) (result i32)))
  (import "k8s.io/scheduler" "handle.objects.get" (func $get (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 1024) "{\"group\":\"topology.node.k8s.io\",\"version\":\"v1alpha2\",\"resource\":\"noderesourcetopologies\",\"namespace\":\"\",\"labelSelector\":\"zone in (a)\"}")
  (data (i32.const 2048) "{\"group\":\"topology.node.k8s.io\",\"version\":\"v1alpha2\",\"resource\":\"noderesourcetopologies\",\"namespace\":\"\",\"name\":\"n1\"}")
  (data (i32.const 3072) "{\"group\":\"\",\"version\":\"v1\",\"resource\":\"namespaces\",\"namespace\":\"\"}")
  (global $list_len (export "list_len") (mut i32) (i32.const -1))
  (global $get_len (export "get_len") (mut i32) (i32.const -1))
  (global $undeclared (export "undeclared") (mut i32) (i32.const 0))
  (func (export "filter") (result i32)
    (global.set $list_len (call $list (i32.const 1024) (i32.const 134) (i32.const 8192) (i32.const 8000)))
    (global.set $get_len (call $get (i32.const 2048) (i32.const 116) (i32.const 16384) (i32.const 8000)))
    (if (global.get $undeclared)
      (then (drop (call $list (i32.const 3072) (i32.const 66) (i32.const 8192) (i32.const 8000)))))
    (i32.const 0)))
