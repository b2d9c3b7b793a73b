"""The modules a wasm plugin runs at once (docs/abi.md §16.2): the current one, which new scheduling
cycles get, and the ones a reload replaced, which pods pinned to their instances keep until their cycles
end (the cycle-state contract, §8, holds across a reload: one pod's calls of one cycle never change
module). A replaced module's pool is closed, and its instances freed, once no pod is pinned to it.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass

from wasmsched.wasm.instance import CompiledGuest
from wasmsched.wasm.pool import InstancePool, Pin

log = logging.getLogger("wasmsched.wasm")


@dataclass(eq=False)
class GuestVersion:
    compiled: CompiledGuest
    pool: InstancePool
    # The module's bytes' SHA-256 (hex): what a reload compares.
    sha256: str


class Versions:
    def __init__(self, first: GuestVersion) -> None:
        # Swapped by assignment: a reader sees the old or the new version, never half of one.
        self.current = first
        self._lock = threading.Lock()
        self._draining: list[GuestVersion] = []
        # Counters of the pools closed so far (created and discarded keep counting up across reloads).
        self._retired = {"created": 0, "discarded": 0}

    def for_pod(self, pod_key: str, pin: Pin) -> GuestVersion:
        """The version a call of this pod runs on: the one its instance is pinned in; for PreFilter, which
        starts a new cycle, always the current one (releasing what an older one still holds for the pod)."""
        if not self._draining:
            return self.current
        with self._lock:
            draining = list(self._draining)
        if pin is Pin.PREFILTER:
            for v in draining:
                v.pool.release(pod_key)
            self.collect()
            return self.current
        for v in draining:
            if v.pool.holds(pod_key):
                return v
        return self.current

    def all(self) -> list[GuestVersion]:
        with self._lock:
            return [self.current, *self._draining]

    def replace(self, new: GuestVersion) -> GuestVersion:
        """Makes `new` the current version; returns the replaced one, which drains."""
        with self._lock:
            old = self.current
            self._draining.append(old)
            self.current = new
        self.collect()
        return old

    def collect(self) -> None:
        """Closes the replaced versions no pod holds an instance of any more."""
        if not self._draining:
            return
        with self._lock:
            done = [v for v in self._draining if v.pool.unused()]
            for v in done:
                self._draining.remove(v)
        for v in done:
            v.pool.close()
            c = v.pool.counters()
            with self._lock:
                self._retired["created"] += c["created"]
                self._retired["discarded"] += c["discarded"]
            log.info('"Replaced wasm module freed: no pod holds its instances" plugin="%s" sha256="%s"',
                     v.compiled.name, v.sha256[:12])

    def draining(self) -> int:
        with self._lock:
            return len(self._draining)

    def counters(self) -> dict[str, int]:
        """The pools' counters summed: instances of every live version; created/discarded since start."""
        out: dict[str, int] = {}
        for v in self.all():
            for k, n in v.pool.counters().items():
                out[k] = out.get(k, 0) + n
        with self._lock:
            for k, n in self._retired.items():
                out[k] = out.get(k, 0) + n
        return out

    def close(self) -> None:
        for v in self.all():
            v.pool.close()
