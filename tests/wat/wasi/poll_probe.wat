;; poll_oneoff probe. `filter` (and `_start` when start_sleep_ns > 0) builds subscriptions at 0 by `mode`:
;;   0: one clock, relative, `sleep_ns` on `clock_id`
;;   1: one clock, absolute: now (clock_time_get on `clock_id`) + sleep_ns
;;   2: stdin read + a relative clock of sleep_ns
;;   3: fd_read on descriptor 5
;;   4: no subscriptions at all
;; and records errno, nevents and the first event (userdata, error, type, flags) in globals.
(module
  (import "wasi_snapshot_preview1" "poll_oneoff" (func $poll (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "clock_time_get" (func $clock (param i32 i64 i32) (result i32)))
  (memory (export "memory") 1 1)
  (global $mode (export "mode") (mut i32) (i32.const 0))
  (global $clock_id (export "clock_id") (mut i32) (i32.const 1))
  (global $sleep_ns (export "sleep_ns") (mut i64) (i64.const 0))
  (global $start_sleep_ns (export "start_sleep_ns") (mut i64) (i64.const 0))
  (global $errno (export "errno") (mut i32) (i32.const -1))
  (global $nevents (export "nevents") (mut i32) (i32.const -1))
  (global $ev_userdata (export "ev_userdata") (mut i64) (i64.const -1))
  (global $ev_error (export "ev_error") (mut i32) (i32.const -1))
  (global $ev_type (export "ev_type") (mut i32) (i32.const -1))
  (global $ev_flags (export "ev_flags") (mut i32) (i32.const -1))

  ;; a clock subscription at $at: userdata 0x11, relative or absolute
  (func $clock_sub (param $at i32) (param $timeout i64) (param $flags i32)
    (i64.store (local.get $at) (i64.const 0x11))
    (i32.store8 (i32.add (local.get $at) (i32.const 8)) (i32.const 0))
    (i32.store (i32.add (local.get $at) (i32.const 16)) (global.get $clock_id))
    (i64.store (i32.add (local.get $at) (i32.const 24)) (local.get $timeout))
    (i64.store (i32.add (local.get $at) (i32.const 32)) (i64.const 0))
    (i32.store16 (i32.add (local.get $at) (i32.const 40)) (local.get $flags)))

  ;; an fd_read subscription at $at for $fd: userdata 0x22
  (func $read_sub (param $at i32) (param $fd i32)
    (i64.store (local.get $at) (i64.const 0x22))
    (i32.store8 (i32.add (local.get $at) (i32.const 8)) (i32.const 1))
    (i32.store (i32.add (local.get $at) (i32.const 16)) (local.get $fd)))

  (func $run (param $sleep i64)
    (local $n i32)
    (local.set $n (i32.const 1))
    (if (i32.eq (global.get $mode) (i32.const 0))
      (then (call $clock_sub (i32.const 0) (local.get $sleep) (i32.const 0))))
    (if (i32.eq (global.get $mode) (i32.const 1))
      (then
        (drop (call $clock (global.get $clock_id) (i64.const 1) (i32.const 512)))
        (call $clock_sub (i32.const 0) (i64.add (i64.load (i32.const 512)) (local.get $sleep)) (i32.const 1))))
    (if (i32.eq (global.get $mode) (i32.const 2))
      (then
        (call $read_sub (i32.const 0) (i32.const 0))
        (call $clock_sub (i32.const 48) (local.get $sleep) (i32.const 0))
        (local.set $n (i32.const 2))))
    (if (i32.eq (global.get $mode) (i32.const 3))
      (then (call $read_sub (i32.const 0) (i32.const 5))))
    (if (i32.eq (global.get $mode) (i32.const 4))
      (then (local.set $n (i32.const 0))))
    (global.set $errno (call $poll (i32.const 0) (i32.const 1024) (local.get $n) (i32.const 2048)))
    (global.set $nevents (i32.load (i32.const 2048)))
    (global.set $ev_userdata (i64.load (i32.const 1024)))
    (global.set $ev_error (i32.load16_u (i32.const 1032)))
    (global.set $ev_type (i32.load8_u (i32.const 1034)))
    (global.set $ev_flags (i32.load16_u (i32.const 1048))))

  (func (export "_start")
    (if (i64.gt_u (global.get $start_sleep_ns) (i64.const 0))
      (then (call $run (global.get $start_sleep_ns)))))

  (func (export "filter") (result i32)
    (i32.store (i32.const 2048) (i32.const -1))
    (call $run (global.get $sleep_ns))
    (i32.const 0))
)
