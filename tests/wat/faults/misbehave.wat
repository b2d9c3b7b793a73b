;; Behaves for most pods but misbehaves for pods whose currentPod bytes contain "bad-<c>"; <c> picks the fault.
;; Good pods: prefilter ok, filter ok, prescore ok, score = 10 x last digit of the node name, normalizescore "{}".
;; Faults (pod name "bad-<word>", <c> = first letter of <word>):
;;   t  filter: unreachable                          p  filter: "panic: boom" to fd 2, then unreachable
;;   l  filter: endless loop (epoch deadline)        m  filter: memory.grow until -1, report the size on fd 2, trap
;;   d  score: integer divide by zero                g  score on node-2: currentPod getter into buf 0xFFFFFFF0
;;   s  prefilter: result.node_names with length 0x7FFFFFFF (beyond memory)
;;   r  filter: result.status_reason at 0xFFFFFFF0 (unreadable, no trap), code 2
;;   u  filter: result.status_reason with invalid UTF-8 "bad \ff\fe reason", code 3
;;   n  normalizescore: result.normalized_score_list "{not json"
;;   e  prescore: handle.eventrecorder.eventf "{oops" (invalid JSON)
;; currentPod is always read with buf_limit 0xFFFFFFFF: the host must check only the n bytes it writes.
(module
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "k8s.io/scheduler" "currentPod" (func $current_pod (param i32 i32) (result i32)))
  (import "k8s.io/scheduler" "currentNodeName" (func $current_node_name (param i32 i32) (result i32)))
  (import "k8s.io/scheduler" "result.status_reason" (func $status_reason (param i32 i32)))
  (import "k8s.io/scheduler" "result.node_names" (func $node_names (param i32 i32)))
  (import "k8s.io/scheduler" "result.normalized_score_list" (func $normalized (param i32 i32)))
  (import "k8s.io/scheduler" "handle.eventrecorder.eventf" (func $eventf (param i32 i32)))
  ;; no maximum: memoryLimitPages is the only bound on memory.grow
  (memory (export "memory") 1)
  (data (i32.const 0) "bad-")
  (data (i32.const 16) "panic: boom")
  (data (i32.const 32) "{not json")
  (data (i32.const 48) "bad \ff\fe reason")
  (data (i32.const 64) "{}")
  (data (i32.const 80) "{oops")
  (data (i32.const 128) "\10\00\00\00\0b\00\00\00")  ;; iovec: "panic: boom"
  (data (i32.const 144) "\a0\00\00\00\16\00\00\00")  ;; iovec: the 22-byte text at 160
  (data (i32.const 160) "grow failed at ? pages")

  ;; the byte after "bad-" in the current pod's protobuf bytes (read at 1024), or 0
  (func $fault (result i32)
    (local $n i32) (local $i i32)
    (local.set $n (call $current_pod (i32.const 1024) (i32.const -1)))
    (block $done
      (loop $scan
        (br_if $done (i32.gt_u (i32.add (local.get $i) (i32.const 5)) (local.get $n)))
        (if (i32.eq (i32.load (i32.add (i32.const 1024) (local.get $i))) (i32.load (i32.const 0)))
          (then (return (i32.load8_u (i32.add (i32.const 1028) (local.get $i))))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $scan)))
    (i32.const 0))

  ;; last byte of the current node name as a digit (0 if none)
  (func $last_digit (result i32)
    (local $n i32) (local $c i32)
    (local.set $n (call $current_node_name (i32.const 512) (i32.const 256)))
    (if (i32.or (i32.eqz (local.get $n)) (i32.gt_u (local.get $n) (i32.const 256)))
      (then (return (i32.const 0))))
    (local.set $c (i32.load8_u (i32.add (i32.const 511) (local.get $n))))
    (if (i32.or (i32.lt_u (local.get $c) (i32.const 48)) (i32.gt_u (local.get $c) (i32.const 57)))
      (then (return (i32.const 0))))
    (i32.sub (local.get $c) (i32.const 48)))

  (func (export "prefilter") (result i32)
    (if (i32.eq (call $fault) (i32.const 115)) ;; 's'
      (then (call $node_names (i32.const 16) (i32.const 0x7FFFFFFF))))
    (i32.const 0))

  (func (export "filter") (result i32)
    (local $f i32)
    (local.set $f (call $fault))
    (if (i32.eq (local.get $f) (i32.const 116)) (then unreachable)) ;; 't'
    (if (i32.eq (local.get $f) (i32.const 112)) ;; 'p'
      (then
        (drop (call $fd_write (i32.const 2) (i32.const 128) (i32.const 1) (i32.const 136)))
        unreachable))
    (if (i32.eq (local.get $f) (i32.const 108)) (then (loop $forever (br $forever)))) ;; 'l'
    (if (i32.eq (local.get $f) (i32.const 109)) ;; 'm'
      (then
        (loop $grow (br_if $grow (i32.ne (memory.grow (i32.const 1)) (i32.const -1))))
        (i32.store8 (i32.const 175) (i32.add (i32.const 48) (memory.size)))
        (drop (call $fd_write (i32.const 2) (i32.const 144) (i32.const 1) (i32.const 136)))
        unreachable))
    (if (i32.eq (local.get $f) (i32.const 114)) ;; 'r'
      (then
        (call $status_reason (i32.const 0xFFFFFFF0) (i32.const 100))
        (return (i32.const 2))))
    (if (i32.eq (local.get $f) (i32.const 117)) ;; 'u'
      (then
        (call $status_reason (i32.const 48) (i32.const 13))
        (return (i32.const 3))))
    (i32.const 0))

  (func (export "prescore") (result i32)
    (if (i32.eq (call $fault) (i32.const 101)) ;; 'e'
      (then (call $eventf (i32.const 80) (i32.const 5))))
    (i32.const 0))

  (func (export "score") (result i64)
    (local $f i32) (local $d i32)
    (local.set $f (call $fault))
    (local.set $d (call $last_digit))
    (if (i32.eq (local.get $f) (i32.const 100)) ;; 'd'
      (then (drop (i32.div_s (i32.const 1) (i32.sub (local.get $d) (local.get $d))))))
    (if (i32.and (i32.eq (local.get $f) (i32.const 103)) (i32.eq (local.get $d) (i32.const 2))) ;; 'g'
      (then (drop (call $current_pod (i32.const 0xFFFFFFF0) (i32.const -1)))))
    (i64.shl (i64.extend_i32_u (i32.mul (local.get $d) (i32.const 10))) (i64.const 32)))

  (func (export "normalizescore") (result i32)
    (if (i32.eq (call $fault) (i32.const 110)) ;; 'n'
      (then
        (call $normalized (i32.const 32) (i32.const 9))
        (return (i32.const 0))))
    (call $normalized (i32.const 64) (i32.const 2))
    (i32.const 0))
)
