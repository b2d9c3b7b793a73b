"""Guest instances pinned to pods (docs/abi.md §8, the cycle-state contract).

An instance is idle, scheduling(P), binding(P) or discarded. PreFilter(P) pins one to P; P's later
scheduling-cycle calls run on it; when P's scheduling cycle succeeds it is handed to P's binding
cycle and the next pod gets another; Unreserve, the end of the binding cycle, P's deletion, a
failed cycle, or the next PreFilter return it to the idle set. Calls on one instance never overlap.
The number of live instances is bounded; a trapped instance is discarded and replaced on demand.

A shared pool (docs/abi.md §15.6, `sharedInstance`) has one instance that every call runs on, one at a
time: nothing is pinned, and its memory is the plugin's state across pods.
"""

from __future__ import annotations

import enum
import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from wasmsched.wasm.errors import WasmLoadError
from wasmsched.wasm.instance import GuestInstance

log = logging.getLogger("wasmsched.wasm")

# Without a per-call timeout ("0s"), waiting for a free instance is still bounded.
DEFAULT_WAIT_SECONDS = 60.0

DISCARDED_TEXT = "guest instance was discarded after a failure"


class PoolError(Exception):
    """No instance to run a call on; the text becomes `wasm: <export> error: <text>`."""


class Pin(enum.Enum):
    PREFILTER = "prefilter"  # pin (re-pin) to the pod, releasing a binding instance it still holds
    SCHEDULING = "scheduling"  # the pod's scheduling instance, pinned on demand
    BINDING = "binding"  # the pod's binding instance, else its scheduling one, else none (no-op)


class InstancePool:
    def __init__(self, create: Callable[[], GuestInstance], max_instances: int, wait_timeout: float | None,
                 hand_off_to_binding: bool, shared: bool = False, plugin: str = "") -> None:
        """`shared`: one instance for every call, never pinned (max_instances is then 1); `plugin` names the
        plugin in the pool's own log lines."""
        self._create = create
        self.plugin = plugin
        self.shared = shared
        self._shared: GuestInstance | None = None
        if shared:
            max_instances = 1
        self.max_instances = max_instances
        self.wait_timeout = wait_timeout if wait_timeout is not None else DEFAULT_WAIT_SECONDS
        # With none of unreserve/prebind/bind/postbind exported, nothing runs in the binding cycle.
        self.hand_off_to_binding = hand_off_to_binding
        self._cv = threading.Condition()
        self._live: dict[int, GuestInstance] = {}
        self._idle: list[GuestInstance] = []  # LIFO: the most recently used instance is reused first
        self._scheduling: dict[str, GuestInstance] = {}
        self._binding: dict[str, GuestInstance] = {}
        self._locks: dict[int, threading.Lock] = {}
        self._busy: dict[int, int] = {}
        self._release_after_call: set[int] = set()
        self._discarded_ids: set[int] = set()
        self._discarded_pods: set[str] = set()
        self._creating = 0
        self._closed = False
        self.created = 0
        self.discarded = 0

    # ----- creation -----------------------------------------------------------------------------

    def prime(self) -> None:
        """Creates the first instance eagerly so a broken guest fails at load (docs/abi.md §2)."""
        inst = self._create()
        with self._cv:
            self._register(inst)
            self._idle.append(inst)

    def _register(self, inst: GuestInstance) -> None:
        self._live[inst.id] = inst
        self._locks[inst.id] = threading.Lock()
        self._busy[inst.id] = 0
        self.created += 1

    def _new_instance_locked(self) -> GuestInstance:
        """Creates an instance; called with the lock held, which is released while the guest starts."""
        self._creating += 1
        self._cv.release()
        try:
            inst = self._create()
        except WasmLoadError as e:
            raise PoolError(f"failed to create a guest instance: {e}") from e
        finally:
            self._cv.acquire()
            self._creating -= 1
        self._register(inst)
        return inst

    def _take_free_locked(self) -> GuestInstance:
        """An idle instance, else a new one, else waits for one up to the wait timeout."""
        deadline = time.monotonic() + self.wait_timeout
        while True:
            if self._closed:
                raise PoolError("plugin closed")
            if self._idle:
                return self._idle.pop()
            if len(self._live) + self._creating < self.max_instances:
                return self._new_instance_locked()
            left = deadline - time.monotonic()
            if left <= 0:
                raise PoolError(f"no guest instance available (maxInstances={self.max_instances})")
            self._cv.wait(left)

    # ----- pinning ------------------------------------------------------------------------------

    @contextmanager
    def pinned(self, pod_key: str, pin: Pin) -> Iterator[GuestInstance | None]:
        """The instance a call for pod_key runs on, held exclusively for the call.

        Yields None for a binding-cycle call of a pod that holds no instance (Unreserve/PostBind
        then do nothing). Raises PoolError when the call must fail without entering the guest.
        """
        inst = self.enter(pod_key, pin)
        if inst is None:
            yield None
            return
        try:
            yield inst
        finally:
            self.exit(inst)

    def enter(self, pod_key: str, pin: Pin) -> GuestInstance | None:
        """pinned() without the context manager, for the per-call hot path: the instance, held until
        exit(inst) (which the caller must call), or None; raises PoolError."""
        with self._cv:
            inst = self._resolve_locked(pod_key, pin)
            if inst is None:
                return None
            self._busy[inst.id] += 1
            lock = self._locks[inst.id]
        if not lock.acquire(blocking=False):
            lock.acquire()
        if inst.id in self._discarded_ids:
            # A parallel call for the same pod trapped while this one waited for the instance.
            lock.release()
            self._call_finished(inst)
            raise PoolError(DISCARDED_TEXT)
        return inst

    def exit(self, inst: GuestInstance) -> None:
        """Ends a call entered with enter()."""
        self._locks[inst.id].release()
        self._call_finished(inst)

    def _resolve_locked(self, pod_key: str, pin: Pin) -> GuestInstance | None:
        if self._closed:
            raise PoolError("plugin closed")
        if self.shared:
            return self._shared_locked()
        if pin is Pin.PREFILTER:
            self._discarded_pods.discard(pod_key)
            held = self._binding.pop(pod_key, None)
            if held is not None:
                self._to_idle_locked(held)
            return self._scheduling.get(pod_key) or self._pin_locked(pod_key)
        if pod_key in self._discarded_pods:
            if pin is Pin.BINDING:
                return None
            raise PoolError(DISCARDED_TEXT)
        if pin is Pin.BINDING:
            return self._binding.get(pod_key) or self._scheduling.get(pod_key)
        return self._scheduling.get(pod_key) or self._pin_locked(pod_key)

    def _pin_locked(self, pod_key: str) -> GuestInstance:
        if self._scheduling:
            # Another pod's scheduling instance: its cycle is over (one scheduling cycle runs at a time).
            inst = self._scheduling.pop(next(iter(self._scheduling)))
        else:
            inst = self._take_free_locked()
            # Creating an instance releases the lock: a parallel call may have pinned one meanwhile.
            pinned = self._scheduling.get(pod_key)
            if pinned is not None:
                self._idle.append(inst)
                self._cv.notify_all()
                return pinned
        self._scheduling[pod_key] = inst
        return inst

    def _shared_locked(self) -> GuestInstance:
        """The shared pool's instance: a new one when there is none or it was discarded."""
        inst = self._shared
        if inst is not None and inst.id in self._live and inst.id not in self._discarded_ids:
            return inst
        lost = inst is not None
        while self._idle:  # the primed instance
            cand = self._idle.pop()
            if cand.id not in self._discarded_ids:
                self._shared = cand
                return cand
        new = self._take_free_locked()
        if self._shared is not inst and self._shared is not None and self._shared.id not in self._discarded_ids:
            # Another call made one while creating released the lock.
            self._idle.append(new)
            return self._shared
        self._shared = new
        if lost:
            log.warning('"Shared guest instance replaced after a failure: the plugin\'s state was lost" '
                        'plugin="%s" instance=%d', self.plugin, new.id)
        return new

    @contextmanager
    def borrowed(self) -> Iterator[GuestInstance]:
        """An idle (or new) instance for a call that belongs to no pod (EventsToRegister, PreEnqueue,
        QueueSort, queueing hints); the shared pool's one instance."""
        with self._cv:
            if self.shared:
                inst = self._shared_locked()
            else:
                inst = self._take_free_locked()
                self._release_after_call.add(inst.id)
            self._busy[inst.id] += 1
        lock = self._locks[inst.id]
        lock.acquire()
        try:
            yield inst
        finally:
            lock.release()
            self._call_finished(inst)

    def _call_finished(self, inst: GuestInstance) -> None:
        close = False
        with self._cv:
            self._busy[inst.id] -= 1
            if self._busy[inst.id] == 0:
                if inst.id in self._discarded_ids:
                    self._forget_locked(inst)
                    close = True
                elif inst.id in self._release_after_call:
                    self._release_after_call.discard(inst.id)
                    if self._closed:
                        self._forget_locked(inst)
                        close = True
                    else:
                        self._idle.append(inst)
                        self._cv.notify_all()
        if close:
            inst.close()

    def _forget_locked(self, inst: GuestInstance) -> None:
        self._live.pop(inst.id, None)
        self._locks.pop(inst.id, None)
        self._busy.pop(inst.id, None)
        self._discarded_ids.discard(inst.id)
        self._release_after_call.discard(inst.id)
        self._cv.notify_all()

    def _to_idle_locked(self, inst: GuestInstance) -> None:
        if inst.id in self._discarded_ids or inst.id not in self._live:
            return
        if self._busy.get(inst.id):
            # P's call is still running (e.g. P was deleted meanwhile): idle once it returns.
            self._release_after_call.add(inst.id)
            return
        if inst not in self._idle:
            self._idle.append(inst)
            self._cv.notify_all()

    # ----- cycle events -------------------------------------------------------------------------

    def scheduling_done(self, pod_key: str, succeeded: bool) -> None:
        """P's scheduling cycle ended: hand its instance to the binding cycle, or release it."""
        with self._cv:
            self._discarded_pods.discard(pod_key)
            inst = self._scheduling.pop(pod_key, None)
            if inst is None:
                return
            if succeeded and self.hand_off_to_binding:
                self._binding[pod_key] = inst
            else:
                self._to_idle_locked(inst)

    def release(self, pod_key: str) -> None:
        """P no longer needs an instance (Unreserve returned, binding cycle ended, P deleted)."""
        with self._cv:
            self._discarded_pods.discard(pod_key)
            for table in (self._binding, self._scheduling):
                inst = table.pop(pod_key, None)
                if inst is not None:
                    self._to_idle_locked(inst)

    def discard(self, inst: GuestInstance) -> None:
        """The instance failed (trap, timeout, proc_exit, failed import): never use it again."""
        with self._cv:
            if inst.id in self._discarded_ids or inst.id not in self._live:
                return
            self._discarded_ids.add(inst.id)
            self.discarded += 1
            for table in (self._scheduling, self._binding):
                for key in [k for k, v in table.items() if v is inst]:
                    del table[key]
                    self._discarded_pods.add(key)
            if inst in self._idle:
                self._idle.remove(inst)
            if not self._busy.get(inst.id):
                self._forget_locked(inst)
                close = True
            else:
                close = False
        if close:
            inst.close()

    def close(self) -> None:
        with self._cv:
            self._closed = True
            idle = [i for i in self._live.values() if not self._busy.get(i.id)]
            for inst in idle:
                self._forget_locked(inst)
            for inst in list(self._live.values()):
                self._release_after_call.add(inst.id)
            self._idle.clear()
            self._scheduling.clear()
            self._binding.clear()
        for inst in idle:
            inst.close()

    # ----- observation (docs/abi.md §8 test hooks; simulate's summary) -------------------------------

    def counters(self) -> dict[str, int]:
        with self._cv:
            return {
                "created": self.created,
                "discarded": self.discarded,
                "live": len(self._live) - len(self._discarded_ids),
                # A shared pool's instance is idle between calls (it is never in _idle).
                "idle": len(self._idle) + (1 if self._shared is not None and self._shared.id in self._live
                                           and self._shared.id not in self._discarded_ids
                                           and not self._busy.get(self._shared.id) else 0),
                "scheduling": len(self._scheduling),
                "binding": len(self._binding),
            }

    def holds(self, pod_key: str) -> bool:
        """Whether an instance is pinned to the pod (its scheduling or binding cycle runs here)."""
        with self._cv:
            return pod_key in self._scheduling or pod_key in self._binding

    def unused(self) -> bool:
        """No pod holds an instance and no call runs: what a replaced module waits for (wasm/versions.py)."""
        with self._cv:
            return not self._scheduling and not self._binding and not any(self._busy.values())

    def pinned_instance_id(self, pod_key: str) -> int | None:
        with self._cv:
            inst = self._scheduling.get(pod_key) or self._binding.get(pod_key)
            return inst.id if inst is not None else None

    def instance(self, instance_id: int) -> GuestInstance | None:
        with self._cv:
            return self._live.get(instance_id)

    def instances(self) -> list[GuestInstance]:
        with self._cv:
            return list(self._live.values())
