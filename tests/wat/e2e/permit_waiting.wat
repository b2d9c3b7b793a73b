;; Permit with the waiting-pod handle: a pod whose bytes contain "hold" (and not yet "remo", i.e. it was
;; never rejected) waits 60 s; a pod whose bytes contain "free" looks up the waiting pod "uid-hold" with
;; handle.get_waiting_pod and, only if it is found, rejects it with handle.reject_waiting_pod.
(module
  (import "k8s.io/scheduler" "currentPod" (func $current_pod (param i32 i32) (result i32)))
  (import "k8s.io/scheduler" "handle.get_waiting_pod" (func $get_waiting_pod (param i32 i32 i32 i32)))
  (import "k8s.io/scheduler" "handle.reject_waiting_pod" (func $reject_waiting_pod (param i32 i32 i32 i32)))
  (import "k8s.io/scheduler" "result.status_reason" (func $status_reason (param i32 i32)))
  (memory (export "memory") 2 2)
  (data (i32.const 0) "hold")
  (data (i32.const 4) "free")
  (data (i32.const 8) "remo")
  (data (i32.const 16) "uid-hold")
  (data (i32.const 32) "reject_waiting_pod did not reject")

  ;; whether the current pod's protobuf bytes (read at 1024) contain the 4 bytes at $pat
  (func $contains (param $pat i32) (result i32)
    (local $n i32) (local $i i32)
    (local.set $n (call $current_pod (i32.const 1024) (i32.const 60000)))
    (if (i32.gt_u (local.get $n) (i32.const 60000)) (then (unreachable)))
    (block $done
      (loop $scan
        (br_if $done (i32.gt_u (i32.add (local.get $i) (i32.const 4)) (local.get $n)))
        (if (i32.eq (i32.load (i32.add (i32.const 1024) (local.get $i))) (i32.load (local.get $pat)))
          (then (return (i32.const 1))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $scan)))
    (i32.const 0))

  (func (export "permit") (result i64)
    (if (i32.and (call $contains (i32.const 0)) (i32.eqz (call $contains (i32.const 8))))
      (then (return (i64.const 0x00000004_0000EA60))))  ;; Wait, 60000 ms
    (if (call $contains (i32.const 4))
      (then
        (i64.store (i32.const 64) (i64.const 0))
        (call $get_waiting_pod (i32.const 16) (i32.const 8) (i32.const 70000) (i32.const 60000))
        (if (i32.load8_u (i32.const 70000))  ;; a first byte of 0x00 means not found
          (then
            (call $reject_waiting_pod (i32.const 16) (i32.const 8) (i32.const 64) (i32.const 8))
            (if (i64.ne (i64.load (i32.const 64)) (i64.const 1))
              (then
                (call $status_reason (i32.const 32) (i32.const 33))
                (return (i64.const 0x00000001_00000000)))))))) ;; Error
    (i64.const 0))
)
