"""Clocks: the real monotonic one and a simulated one the simulator advances by itself."""

from __future__ import annotations

import threading
import time


class RealClock:
    def now(self) -> float:
        return time.monotonic()


class SimClock:
    """Time that moves only when the simulator says so: backoffs and Permit waits cost no wall time."""

    def __init__(self, start: float = 1_000_000.0) -> None:
        self._now = start
        self._lock = threading.Lock()

    def now(self) -> float:
        return self._now

    def advance_to(self, t: float) -> None:
        with self._lock:
            self._now = max(self._now, t)

    def advance(self, seconds: float) -> None:
        with self._lock:
            self._now += seconds
