;; PreScore records a fixed event (type Normal, reason GuestSaysHello) regarding pod default/evt-pod via eventf.
(module
  (import "k8s.io/scheduler" "handle.eventrecorder.eventf" (func $eventf (param i32 i32)))
  (memory (export "memory") 1 1)
  (data (i32.const 0) "{\"RegardingReference\":{\"Kind\":\"Pod\",\"APIVersion\":\"v1\",\"Name\":\"evt-pod\",\"Namespace\":\"default\",\"UID\":\"\",\"ResourceVersion\":\"\"},\"Eventtype\":\"Normal\",\"Reason\":\"GuestSaysHello\",\"Action\":\"PreScore\",\"Note\":\"hello from the guest\"}")

  (func (export "prescore") (result i32)
    (call $eventf (i32.const 0) (i32.const 221))
    (i32.const 0))
)
