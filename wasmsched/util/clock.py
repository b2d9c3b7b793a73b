"""The simulated clock the simulator advances by itself (a real scheduler uses time.monotonic)."""

from __future__ import annotations

import threading


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
