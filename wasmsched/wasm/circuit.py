"""A wasm plugin's circuit breaker (docs/abi.md §16.3): after `maxConsecutiveFaults` guest faults in a row
the plugin's calls stop entering the guest for `faultCooldown`; then calls go in again, and the first one
decides: a success closes the breaker, a fault opens it for another cooldown.

kube-scheduler has no such thing (an in-tree plugin cannot trap); the shape is Envoy's outlier detection
(consecutive errors, ejection time), applied to one plugin instead of one upstream host. It counts faults
only (traps, timeouts, malformed answers), never a guest's own Error or Unschedulable answer.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

log = logging.getLogger("wasmsched.wasm")


class CircuitBreaker:
    def __init__(self, plugin: str, max_consecutive_faults: int, cooldown: float,
                 clock: Callable[[], float]) -> None:
        """max_consecutive_faults 0 never opens it; `clock` is the scheduler's (seconds)."""
        self.plugin = plugin
        self.max_consecutive_faults = max_consecutive_faults
        self.cooldown = cooldown
        self.clock = clock
        self._lock = threading.Lock()
        # Read without the lock on the hot path: a stale read only delays a reset by one call.
        self.consecutive = 0
        self.open_until: float | None = None
        self.opened = 0

    def open_until_now(self) -> float | None:
        """When the breaker is open, the scheduler-clock time it lets calls in again; None when calls may
        enter the guest (closed, or its cooldown is over and the next call probes)."""
        until = self.open_until
        if until is None or self.clock() >= until:
            return None
        return until

    def success(self) -> bool:
        """A call returned without a fault; True when that closed an opened breaker."""
        if not self.consecutive:
            return False
        with self._lock:
            was_open = self.open_until is not None
            self.consecutive = 0
            self.open_until = None
        if was_open:
            log.info('"Wasm plugin\'s circuit breaker closed: a call succeeded after the cooldown" plugin="%s"',
                     self.plugin)
        return was_open

    def fault(self) -> bool:
        """A call faulted; True when that opened the breaker (it was closed, or probing after a cooldown)."""
        if self.max_consecutive_faults <= 0:
            return False
        with self._lock:
            self.consecutive += 1
            if self.consecutive < self.max_consecutive_faults:
                return False
            now = self.clock()
            if self.open_until is not None and now < self.open_until:
                return False  # a call that entered before the breaker opened
            self.open_until = now + self.cooldown
            self.opened += 1
            faults = self.consecutive
        log.error('"Wasm plugin\'s circuit breaker opened: its calls do not enter the guest until the cooldown '
                  'ends" plugin="%s" consecutiveFaults=%d cooldown="%gs"', self.plugin, faults, self.cooldown)
        return True

    def reset(self) -> None:
        """A new module replaced the faulting one: it starts closed."""
        with self._lock:
            self.consecutive = 0
            self.open_until = None
