"""A thread pool whose threads end when there is no work for them, as goroutines end with theirs.

concurrent.futures' ThreadPoolExecutor keeps every thread it ever started until it is shut down. `run`
starts hundreds during a backlog (a binding cycle waits on its API call; kube gives each a goroutine),
and each kept thread keeps the stack pages its deepest call touched: ~65 MiB for ~370 threads after one
backlog, held for good (bench/soak_cluster.py). An ElasticPool's thread that waited `idle_seconds` for
work ends, and glibc returns an ended thread's stack pages to the system.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any


class PoolShutDown(RuntimeError):
    """submit() after shutdown(), as ThreadPoolExecutor raises RuntimeError then."""


class ElasticPool:
    """Up to `max_workers` threads named `name`-N: one starts when work is submitted and none is idle; one
    that found no work for `idle_seconds` ends. submit/shutdown as ThreadPoolExecutor's."""

    def __init__(self, max_workers: int, idle_seconds: float, name: str) -> None:
        if max_workers < 1:
            raise ValueError("max_workers must be at least 1")
        self.max_workers = max_workers
        self.idle_seconds = idle_seconds
        self.name = name
        self._work: queue.SimpleQueue[tuple[Future[Any], Callable[..., Any], tuple[Any, ...]] | None] = \
            queue.SimpleQueue()
        self._lock = threading.Lock()
        self._threads: set[threading.Thread] = set()
        self._waiting = 0  # threads waiting for work
        self._queued = 0  # work submitted and not yet taken
        self._started = 0
        self._shutdown = False

    def submit(self, fn: Callable[..., Any], *args: Any) -> Future[Any]:
        fut: Future[Any] = Future()
        with self._lock:
            if self._shutdown:
                raise PoolShutDown("cannot schedule new work after shutdown")
            self._queued += 1
            self._work.put((fut, fn, args))
            if self._queued > self._waiting and len(self._threads) < self.max_workers:
                self._started += 1
                t = threading.Thread(target=self._worker, name=f"{self.name}-{self._started}", daemon=True)
                self._threads.add(t)
                t.start()
        return fut

    def threads(self) -> int:
        with self._lock:
            return len(self._threads)

    def _worker(self) -> None:
        me = threading.current_thread()
        while True:
            with self._lock:
                self._waiting += 1
            try:
                item = self._work.get(timeout=self.idle_seconds)
            except queue.Empty:
                with self._lock:
                    self._waiting -= 1
                    if self._queued > 0:
                        continue  # submitted as this thread timed out, counting on it: take it
                    self._threads.discard(me)
                    return
            with self._lock:
                self._waiting -= 1
                if item is None:
                    self._threads.discard(me)
                    return
                self._queued -= 1
            fut, fn, args = item
            if fut.set_running_or_notify_cancel():
                try:
                    fut.set_result(fn(*args))
                except BaseException as e:  # noqa: BLE001 - kept in the future, as ThreadPoolExecutor does
                    fut.set_exception(e)
            del item, fut, fn, args  # nothing of the job outlives it while this thread waits

    def shutdown(self, wait: bool = True, cancel_futures: bool = False) -> None:
        with self._lock:
            self._shutdown = True
            threads = list(self._threads)
        if cancel_futures:
            while True:
                try:
                    item = self._work.get_nowait()
                except queue.Empty:
                    break
                if item is not None:
                    with self._lock:
                        self._queued -= 1
                    item[0].cancel()
        for _ in threads:
            self._work.put(None)
        if wait:
            for t in threads:
                t.join()
