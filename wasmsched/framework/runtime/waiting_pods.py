"""Pods held at Permit (framework/runtime/waiting_pods_map.go), driven by a clock, not timers.

A waiting pod resolves exactly once: allowed by every pending plugin, rejected by one, or timed out.
Instead of a goroutine per pod blocking, the binding cycle registers a continuation, so waiting
pods hold no thread; the scheduler expires deadlines from its clock.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from wasmsched.api.types import Pod
from wasmsched.api.wellknown import format_go_duration
from wasmsched.framework.status import Code, Status


class WaitingPodImpl:
    def __init__(self, pod: Pod, plugin_deadlines: dict[str, tuple[float, float]]) -> None:
        """plugin_deadlines: plugin -> (deadline on the scheduler clock, timeout in seconds)."""
        self.pod = pod
        self._pending = dict(plugin_deadlines)
        self._lock = threading.Lock()
        self._result: Status | None = None
        self._done = False
        self._callbacks: list[Callable[[Status | None], None]] = []

    def get_pod(self) -> Pod:
        return self.pod

    def get_pending_plugins(self) -> list[str]:
        with self._lock:
            return sorted(self._pending)

    def deadline(self) -> float:
        with self._lock:
            return min(d for d, _ in self._pending.values()) if self._pending else 0.0

    def allow(self, plugin_name: str) -> None:
        with self._lock:
            self._pending.pop(plugin_name, None)
            if self._pending or self._done:
                return
        self._resolve(None)

    def reject(self, plugin_name: str, msg: str) -> None:
        self._resolve(Status(Code.UNSCHEDULABLE, [msg], None, plugin_name))

    def expire(self, now: float) -> bool:
        with self._lock:
            expired = sorted((p, t) for p, (d, t) in self._pending.items() if d <= now)
        if not expired:
            return False
        plugin, timeout = expired[0]
        msg = f"rejected due to timeout after waiting {format_go_duration(round(timeout * 1e9))} at plugin {plugin}"
        self._resolve(Status(Code.UNSCHEDULABLE, [msg], None, plugin))
        return True

    def on_done(self, fn: Callable[[Status | None], None]) -> None:
        with self._lock:
            if not self._done:
                self._callbacks.append(fn)
                return
            result = self._result
        fn(result)

    def done(self) -> bool:
        return self._done

    def _resolve(self, status: Status | None) -> None:
        with self._lock:
            if self._done:
                return
            self._done = True
            self._result = status
            callbacks, self._callbacks = self._callbacks, []
        for fn in callbacks:
            fn(status)


class WaitingPodsMap:
    def __init__(self) -> None:
        self._pods: dict[str, WaitingPodImpl] = {}
        self._lock = threading.Lock()

    def add(self, uid: str, wp: WaitingPodImpl) -> None:
        with self._lock:
            self._pods[uid] = wp

    def remove(self, uid: str) -> None:
        with self._lock:
            self._pods.pop(uid, None)

    def get(self, uid: str) -> WaitingPodImpl | None:
        with self._lock:
            return self._pods.get(uid)

    def all(self) -> list[WaitingPodImpl]:
        with self._lock:
            return list(self._pods.values())

    def __len__(self) -> int:
        with self._lock:
            return len(self._pods)
