"""Where binding cycles run: worker threads, as kube runs each in a goroutine, or deferred to the
scheduling thread (workers == 0), so that the same input gives the same writes in the same order."""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING

# concurrent.futures only when there are worker threads: `simulate` runs binding cycles deferred.
if TYPE_CHECKING:
    from concurrent.futures import Future

    from wasmsched.util.threadpool import ElasticPool

log = logging.getLogger("wasmsched.scheduler")


# A binding thread with nothing to do for this long ends (a backlog's hundreds do not stay for good).
IDLE_SECONDS = 10.0


class BindingWorkers:
    def __init__(self, workers: int) -> None:
        self._lock = threading.Condition()
        self._in_flight = 0
        self._executor: ElasticPool | None = None
        if workers > 0:
            from wasmsched.util.threadpool import ElasticPool

            self._executor = ElasticPool(workers, IDLE_SECONDS, "binding")
        self._futures: set[Future[None]] = set()
        self._deferred: deque[Callable[[], None]] = deque()

    def reserve(self) -> None:
        """Counts a binding cycle as in flight from the end of its scheduling cycle (Permit may still wait)."""
        with self._lock:
            self._in_flight += 1

    def submit(self, job: Callable[[], None]) -> None:
        """Runs a reserved binding cycle: now on a worker, or at the next run_deferred()."""
        if self._executor is None:
            self._deferred.append(job)
            return
        fut = self._executor.submit(job)
        with self._lock:
            self._futures.add(fut)
        fut.add_done_callback(self._done)

    def run_deferred(self) -> None:
        """Runs the binding cycles waiting for the scheduling thread (workers == 0), in order."""
        while self._deferred:
            job = self._deferred.popleft()
            try:
                job()
            except Exception as e:
                log.error("binding cycle crashed: %r", e)
            finally:
                self._finished()

    def _done(self, fut: Future[None]) -> None:
        with self._lock:
            self._futures.discard(fut)
        self._finished()
        exc = fut.exception()
        if exc is not None:
            log.error("binding cycle crashed: %r", exc)

    def _finished(self) -> None:
        with self._lock:
            self._in_flight -= 1
            self._lock.notify_all()

    def wait(self, timeout: float | None = None) -> bool:
        """Runs deferred cycles, then waits for the workers' running ones; False on timeout."""
        self.run_deferred()
        with self._lock:
            return self._lock.wait_for(lambda: not self._futures, timeout)

    def in_flight(self) -> int:
        """Binding cycles not finished, including those whose pod still waits on Permit."""
        with self._lock:
            return self._in_flight

    def close(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=True)
        self.run_deferred()
