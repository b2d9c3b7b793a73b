;; Cycle-state probe: prefilter stores the current pod's metadata.uid; every other export traps (unreachable) unless the current pod's uid matches it, or if a call on this instance is already running.
;; Globals (exported, for the tests): prefilters/checks and n_<export> count calls; trap_filter makes filter trap;
;; spin makes filter loop that many host calls; rendezvous makes every export call handle.get_waiting_pod("rv")
;; (a test Handle blocks there); marker is free for tests. permit: uid starting with 'w' -> Wait 100 ms.
;; bind returns Skip (5) so another Bind plugin binds.
;; _start traps while the snapshot has a node named fail-instantiation: instance creation fails (§13 item 60).
(module
  (import "k8s.io/scheduler" "currentPod" (func $current_pod (param i32 i32) (result i32)))
  (import "k8s.io/scheduler" "handle.get_waiting_pod" (func $get_waiting_pod (param i32 i32 i32 i32)))
  (import "k8s.io/klog" "severity" (func $severity (result i32)))
  (import "k8s.io/api" "node" (func $node (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1 1)
  (data (i32.const 0) "rv")
  (data (i32.const 16) "fail-instantiation")

  ;; layout: 0 "rv"; 16 "fail-instantiation" (18 B); 64 get_waiting_pod output (8 B); 1024 stored uid (<= 1024 B); 4096.. pod buffer
  (global $stored_len (export "stored_len") (mut i32) (i32.const -1))
  (global $prefilters (export "prefilters") (mut i32) (i32.const 0))
  (global $checks (export "checks") (mut i32) (i32.const 0))
  (global $busy (export "busy") (mut i32) (i32.const 0))
  (global $trap_filter (export "trap_filter") (mut i32) (i32.const 0))
  (global $spin (export "spin") (mut i32) (i32.const 0))
  (global $rendezvous (export "rendezvous") (mut i32) (i32.const 0))
  (global $marker (export "marker") (mut i32) (i32.const 0))
  (global $n_filter (export "n_filter") (mut i32) (i32.const 0))
  (global $n_postfilter (export "n_postfilter") (mut i32) (i32.const 0))
  (global $n_prescore (export "n_prescore") (mut i32) (i32.const 0))
  (global $n_score (export "n_score") (mut i32) (i32.const 0))
  (global $n_normalizescore (export "n_normalizescore") (mut i32) (i32.const 0))
  (global $n_reserve (export "n_reserve") (mut i32) (i32.const 0))
  (global $n_unreserve (export "n_unreserve") (mut i32) (i32.const 0))
  (global $n_permit (export "n_permit") (mut i32) (i32.const 0))
  (global $n_prebind (export "n_prebind") (mut i32) (i32.const 0))
  (global $n_bind (export "n_bind") (mut i32) (i32.const 0))
  (global $n_postbind (export "n_postbind") (mut i32) (i32.const 0))
  (global $n_addpod (export "n_addpod") (mut i32) (i32.const 0))
  (global $n_removepod (export "n_removepod") (mut i32) (i32.const 0))
  (global $uid_ptr (mut i32) (i32.const 0))
  (global $uid_len (mut i32) (i32.const 0))

  ;; protobuf varint at $p -> (value, next position)
  (func $varint (param $p i32) (result i32 i32)
    (local $v i32) (local $shift i32) (local $b i32)
    (loop $more
      (local.set $b (i32.load8_u (local.get $p)))
      (local.set $p (i32.add (local.get $p) (i32.const 1)))
      (if (i32.lt_u (local.get $shift) (i32.const 32))
        (then (local.set $v (i32.or (local.get $v)
                (i32.shl (i32.and (local.get $b) (i32.const 0x7f)) (local.get $shift))))))
      (local.set $shift (i32.add (local.get $shift) (i32.const 7)))
      (br_if $more (i32.and (local.get $b) (i32.const 0x80))))
    (local.get $v) (local.get $p))

  ;; the first length-delimited field number $field in [$p, $end) -> (ptr, len), or (0, -1)
  (func $find_field (param $p i32) (param $end i32) (param $field i32) (result i32 i32)
    (local $tag i32) (local $len i32)
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $p) (local.get $end)))
        (call $varint (local.get $p))
        (local.set $p)
        (local.set $tag)
        (block $skipped
          (if (i32.eq (i32.and (local.get $tag) (i32.const 7)) (i32.const 2))
            (then
              (call $varint (local.get $p))
              (local.set $p)
              (local.set $len)
              (if (i32.eq (i32.shr_u (local.get $tag) (i32.const 3)) (local.get $field))
                (then (return (local.get $p) (local.get $len))))
              (local.set $p (i32.add (local.get $p) (local.get $len)))
              (br $skipped)))
          (if (i32.eqz (i32.and (local.get $tag) (i32.const 7)))
            (then
              (call $varint (local.get $p))
              (local.set $p)
              (drop)
              (br $skipped)))
          (if (i32.eq (i32.and (local.get $tag) (i32.const 7)) (i32.const 1))
            (then (local.set $p (i32.add (local.get $p) (i32.const 8))) (br $skipped)))
          (if (i32.eq (i32.and (local.get $tag) (i32.const 7)) (i32.const 5))
            (then (local.set $p (i32.add (local.get $p) (i32.const 4))) (br $skipped)))
          unreachable)
        (br $next)))
    (i32.const 0) (i32.const -1))

  ;; sets $uid_ptr/$uid_len to the current pod's metadata.uid; traps if there is none
  (func $read_uid
    (local $n i32) (local $meta i32) (local $meta_len i32)
    (local.set $n (call $current_pod (i32.const 4096) (i32.const 61440)))
    (if (i32.or (i32.eqz (local.get $n)) (i32.gt_u (local.get $n) (i32.const 61440))) (then unreachable))
    (call $find_field (i32.const 4096) (i32.add (i32.const 4096) (local.get $n)) (i32.const 1))
    (local.set $meta_len)
    (local.set $meta)
    (if (i32.lt_s (local.get $meta_len) (i32.const 0)) (then unreachable))
    (call $find_field (local.get $meta) (i32.add (local.get $meta) (local.get $meta_len)) (i32.const 5))
    (global.set $uid_len)
    (global.set $uid_ptr)
    (if (i32.le_s (global.get $uid_len) (i32.const 0)) (then unreachable))
    (if (i32.gt_u (global.get $uid_len) (i32.const 1024)) (then unreachable)))

  ;; marks the instance busy (trapping if a call is already running) and meets the test at the rendezvous
  (func $enter_any
    (if (global.get $busy) (then unreachable))
    (global.set $busy (i32.const 1))
    (if (global.get $rendezvous)
      (then (call $get_waiting_pod (i32.const 0) (i32.const 2) (i32.const 64) (i32.const 8)))))

  ;; $enter_any, then the current pod must be the one prefilter stored
  (func $enter
    (local $i i32)
    (call $enter_any)
    (call $read_uid)
    (if (i32.ne (global.get $uid_len) (global.get $stored_len)) (then unreachable))
    (block $equal
      (loop $cmp
        (br_if $equal (i32.ge_u (local.get $i) (global.get $uid_len)))
        (if (i32.ne (i32.load8_u (i32.add (global.get $uid_ptr) (local.get $i)))
                    (i32.load8_u (i32.add (i32.const 1024) (local.get $i))))
          (then unreachable))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $cmp)))
    (global.set $checks (i32.add (global.get $checks) (i32.const 1))))

  (func $leave
    (global.set $busy (i32.const 0)))

  (func (export "_start")
    (if (call $node (i32.const 16) (i32.const 18) (i32.const 0) (i32.const 0)) (then unreachable)))

  (func (export "prefilter") (result i32)
    (call $enter_any)
    (call $read_uid)
    (memory.copy (i32.const 1024) (global.get $uid_ptr) (global.get $uid_len))
    (global.set $stored_len (global.get $uid_len))
    (global.set $prefilters (i32.add (global.get $prefilters) (i32.const 1)))
    (call $leave)
    (i32.const 0))

  (func (export "filter") (result i32)
    (local $i i32)
    (call $enter)
    (global.set $n_filter (i32.add (global.get $n_filter) (i32.const 1)))
    (block $spun
      (loop $spin
        (br_if $spun (i32.ge_u (local.get $i) (global.get $spin)))
        (drop (call $severity))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $spin)))
    (if (global.get $trap_filter) (then unreachable))
    (call $leave)
    (i32.const 0))

  (func (export "postfilter") (result i64)
    (call $enter) (global.set $n_postfilter (i32.add (global.get $n_postfilter) (i32.const 1))) (call $leave)
    (i64.const 2))  ;; Noop, Unschedulable

  (func (export "prescore") (result i32)
    (call $enter) (global.set $n_prescore (i32.add (global.get $n_prescore) (i32.const 1))) (call $leave) (i32.const 0))
  (func (export "score") (result i64)
    (call $enter) (global.set $n_score (i32.add (global.get $n_score) (i32.const 1))) (call $leave) (i64.const 0))
  (func (export "normalizescore") (result i32)
    (call $enter) (global.set $n_normalizescore (i32.add (global.get $n_normalizescore) (i32.const 1))) (call $leave) (i32.const 0))
  (func (export "reserve") (result i32)
    (call $enter) (global.set $n_reserve (i32.add (global.get $n_reserve) (i32.const 1))) (call $leave) (i32.const 0))
  (func (export "unreserve")
    (call $enter) (global.set $n_unreserve (i32.add (global.get $n_unreserve) (i32.const 1))) (call $leave))

  (func (export "permit") (result i64)
    (call $enter) (global.set $n_permit (i32.add (global.get $n_permit) (i32.const 1))) (call $leave)
    (if (result i64) (i32.eq (i32.load8_u (i32.const 1024)) (i32.const 119))  ;; uid starts with 'w'
      (then (i64.const 0x00000004_00000064))  ;; Wait, 100 ms
      (else (i64.const 0))))

  (func (export "prebind") (result i32)
    (call $enter) (global.set $n_prebind (i32.add (global.get $n_prebind) (i32.const 1))) (call $leave) (i32.const 0))

  (func (export "bind") (result i32)
    (call $enter) (global.set $n_bind (i32.add (global.get $n_bind) (i32.const 1))) (call $leave)
    (i32.const 5))  ;; Skip: another Bind plugin binds

  (func (export "postbind")
    (call $enter) (global.set $n_postbind (i32.add (global.get $n_postbind) (i32.const 1))) (call $leave))
  (func (export "addpod") (result i32)
    (call $enter) (global.set $n_addpod (i32.add (global.get $n_addpod) (i32.const 1))) (call $leave) (i32.const 0))
  (func (export "removepod") (result i32)
    (call $enter) (global.set $n_removepod (i32.add (global.get $n_removepod) (i32.const 1))) (call $leave) (i32.const 0))
)
