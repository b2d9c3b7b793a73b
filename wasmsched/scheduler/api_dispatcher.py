"""The scheduler's writes off the scheduling path: kube 1.37's API dispatcher
(pkg/scheduler/backend/api_dispatcher: api_dispatcher.go, call_queue.go, goroutines_limiter.go).

Calls (api_calls.py: a pod's binding, a pod's status patch) are queued per object (the pod's UID):

- a call for an object that already has one pending is merged with it (two status patches become one
  write: the PodScheduled condition and nominatedNodeName together), or replaces it when it is more
  relevant (a binding makes a pending status patch obsolete), or is refused when it is less relevant;
- a call that would change nothing (a condition already so) is skipped;
- calls of one object run one at a time, in the order they were made: a call added while the object's
  previous call is in flight waits for it;
- `remove_pending` drops an object's pending call (run drops a deleted pod's status patch: it would fail anyway);
- the queue is bounded (`max_pending` objects): `add` waits for room, so a scheduler that outruns the
  API server slows down instead of growing without limit.

kube runs each call in a goroutine of its own; here up to `parallelism` threads run them, each waiting on
one request, so that many writes are in flight over as many keep-alive connections (the client's pool is
sized to match, kube/api.py). Like goroutines, the threads come and go with the work: one starts when a
call is queued and no thread waits for one, and a thread that found no call for `idle_seconds` ends (a
kept thread keeps its stack's pages: bench/soak_cluster.py). A caller that needs the outcome (the binding
cycle) uses `call`, which waits for it, and runs the call on its own thread when nothing is queued or in flight
for the object (it would only wait for a worker); the others (failure handling's status patches) `add` the call
and do not wait at all.

Metrics are kube's: scheduler_async_api_call_execution_total{call_type,result},
scheduler_async_api_call_execution_duration_seconds{call_type,result} and
scheduler_pending_async_api_calls{call_type} (read when scraped).
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from wasmsched.util.klog import quote

if TYPE_CHECKING:
    from wasmsched.metrics.metrics import SchedulerMetrics

log = logging.getLogger("wasmsched.scheduler")

# The queue's bound, in objects with a pending call (kube's is unbounded; a backlog of this many writes
# means the API server is far behind, and the scheduler waits instead of holding more).
DEFAULT_MAX_PENDING = 10000
# Calls in flight at once (kube: a goroutine per call, limited by the client's rate limiter only).
DEFAULT_PARALLELISM = 32
# A worker thread that waited this long for a call ends (util/threadpool.py's reason).
DEFAULT_IDLE_SECONDS = 10.0

RESULT_SUCCESS = "success"
RESULT_ERROR = "error"


class CallSkipped(Exception):
    """The call was not executed: it had no effect, or a more relevant one is queued for its object."""


class CallOverwritten(Exception):
    """The call was replaced by a later one for its object (merged into it, or made obsolete by it)."""


def is_unexpected_error(err: BaseException | None) -> bool:
    """fwk.IsUnexpectedError: skipped and overwritten calls are expected outcomes, not failures."""
    return err is not None and not isinstance(err, (CallSkipped, CallOverwritten))


class APICall(Protocol):
    """fwk.APICall: one write for one object."""

    @property
    def call_type(self) -> str: ...

    @property
    def uid(self) -> str: ...

    def execute(self) -> None:
        """Makes the write; raises what the client raised."""
        ...

    def merge(self, old: APICall) -> None:
        """Takes into this call what a pending call of the same type for the same object would have written."""
        ...

    def is_noop(self) -> bool:
        """True when executing would change nothing."""
        ...


class OnFinish:
    """The outcome of a call, for the one caller that waits on it (kube's buffered `onFinish` channel:
    the first outcome sent is kept, later ones are dropped)."""

    __slots__ = ("_done", "_err")

    def __init__(self) -> None:
        self._done = threading.Event()
        self._err: BaseException | None = None

    def send(self, err: BaseException | None) -> None:
        if not self._done.is_set():
            self._err = err
            self._done.set()

    def wait(self, timeout: float | None = None) -> BaseException | None:
        """The call's error (None: it succeeded); TimeoutError when it has not finished in time."""
        if not self._done.wait(timeout):
            return TimeoutError("the API call did not finish in time")
        return self._err


@dataclass(eq=False)
class _Queued:
    call: APICall
    on_finish: OnFinish | None
    call_id: int = 0

    def send(self, err: BaseException | None) -> None:
        if self.on_finish is not None:
            self.on_finish.send(err)


NO_EFFECT = "call does not need to be executed because it has no effect"


def _skipped(q: _Queued, reason: str) -> CallSkipped:
    """The CallSkipped to raise for q, its waiter told first."""
    err = CallSkipped(reason)
    q.send(err)
    return err


@dataclass
class _Counts:
    pending: dict[str, int] = field(default_factory=dict)

    def add(self, call_type: str, n: int) -> None:
        self.pending[call_type] = self.pending.get(call_type, 0) + n


class CallQueue:
    """call_queue.go: at most one pending call per object, objects in FIFO order, one in flight each."""

    def __init__(self, relevances: Mapping[str, int], max_pending: int = DEFAULT_MAX_PENDING) -> None:
        self.relevances = relevances
        self.max_pending = max(1, max_pending)
        # One lock; a condition per kind of waiter, so that a new call wakes one worker, not all of them.
        self._lock = threading.Lock()
        self._work = threading.Condition(self._lock)  # workers: a call to pop
        self._room = threading.Condition(self._lock)  # adders: room in a full queue
        self._settled = threading.Condition(self._lock)  # wait_idle: nothing pending or in flight
        self._closed = False
        self._next_id = 0
        self._calls: dict[str, _Queued] = {}
        self._order: deque[str] = deque()
        self._in_flight: set[str] = set()
        self._counts = _Counts()
        # Worker threads alive and those of them waiting in pop(): a call queued while no worker waits
        # needs a new one (claim_worker), and a worker ends (pop's idle timeout) under the same lock, so
        # no call is left with nobody to run it.
        self._workers = 0
        self._idle_workers = 0

    def add(self, call: APICall, on_finish: OnFinish | None = None, run_here: bool = False) -> _Queued | None:
        """Queues the call; raises CallSkipped when it is not needed (and tells its OnFinish so). With
        `run_here`, a call whose object has nothing pending or in flight is not queued but returned, in flight:
        the caller runs it and then calls finalize, as a worker would."""
        q = _Queued(call, on_finish)
        with self._lock:
            uid = call.uid
            if run_here and not self._closed and uid not in self._calls:
                if call.is_noop():
                    raise _skipped(q, NO_EFFECT)
                q.call_id = self._next_id
                self._next_id += 1
                self._calls[uid] = q
                self._in_flight.add(uid)
                return q
            # Room is needed only for a new object: a merge or a replacement does not grow the queue.
            while uid not in self._calls and len(self._calls) >= self.max_pending and not self._closed:
                self._room.wait()
            if self._closed:
                raise _skipped(q, "the API dispatcher is closed")
            q.call_id = self._next_id
            self._next_id += 1
            old = self._calls.get(uid)
            if old is not None:
                self._merge(old, q)
            self._enqueue(q, old is not None)
            return None

    def _merge(self, old: _Queued, new: _Queued) -> None:
        old_type, new_type = old.call.call_type, new.call.call_type
        if self.relevances.get(new_type, 0) < self.relevances.get(old_type, 0):
            raise _skipped(new, "a more relevant call is already enqueued for this object")
        if old_type != new_type:
            if old.call.uid in self._in_flight:
                return
            self._counts.add(old_type, -1)
            self._counts.add(new_type, 1)
            old.send(CallOverwritten("a more relevant call was enqueued for this object"))
            return
        try:
            new.call.merge(old.call)
        except Exception as e:
            new.send(e)
            raise
        old.send(CallOverwritten("a call of the same type was enqueued for this object"))

    def _enqueue(self, q: _Queued, old_present: bool) -> None:
        uid = q.call.uid
        if q.call.is_noop() and uid not in self._in_flight:
            if old_present:
                self._remove_pending_locked(uid)
            raise _skipped(q, NO_EFFECT)
        self._calls[uid] = q
        if old_present:
            return
        self._order.append(uid)
        self._counts.add(q.call.call_type, 1)
        self._work.notify()

    def remove_pending(self, uid: str, call_type: str | None = None) -> bool:
        """Drops the object's pending call (not one in flight; of `call_type` only, when given); its waiter
        is told it was skipped."""
        with self._lock:
            q = self._calls.get(uid)
            if q is None or uid in self._in_flight or (call_type is not None and q.call.call_type != call_type):
                return False
            self._remove_pending_locked(uid)
            q.send(CallSkipped("the object was deleted before its call ran"))
            return True

    def _remove_pending_locked(self, uid: str) -> None:
        q = self._calls.pop(uid, None)
        if q is None:
            return
        if uid not in self._in_flight:
            self._order.remove(uid)
            self._counts.add(q.call.call_type, -1)
        self._left()

    def _left(self) -> None:
        """An object left the queue: room for one more, and perhaps nothing is left."""
        self._room.notify()
        if not self._calls and not self._in_flight:
            self._settled.notify_all()

    def claim_worker(self, limit: int) -> bool:
        """Whether a new worker should start: calls wait that no idle worker will take, and fewer than
        `limit` workers are alive. True counts the new worker as alive; it must then call pop()."""
        with self._lock:
            if len(self._order) > self._idle_workers and self._workers < limit and not self._closed:
                self._workers += 1
                return True
            return False

    def workers(self) -> int:
        with self._lock:
            return self._workers

    def pop(self, idle_timeout: float | None = None) -> _Queued | None:
        """The next call to run (its object is then in flight). None once closed and empty, or when no
        call came for `idle_timeout` seconds: the calling worker then counts as ended and must return."""
        with self._lock:
            deadline = None if idle_timeout is None else time.monotonic() + idle_timeout
            while not self._order:
                if self._closed:
                    self._workers -= 1
                    return None
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    self._workers -= 1
                    return None
                self._idle_workers += 1
                try:
                    self._work.wait(left)
                finally:
                    self._idle_workers -= 1
            uid = self._order.popleft()
            q = self._calls[uid]
            self._in_flight.add(uid)
            self._counts.add(q.call.call_type, -1)
            return q

    def finalize(self, q: _Queued) -> None:
        """The call ran: its object leaves flight; a call added for it meanwhile is queued now."""
        with self._lock:
            uid = q.call.uid
            cur = self._calls.get(uid)
            self._in_flight.discard(uid)
            if cur is not None and cur.call_id == q.call_id:
                del self._calls[uid]
                self._left()
            elif cur is not None:
                self._order.append(uid)
                self._counts.add(cur.call.call_type, 1)
                self._work.notify()
            elif not self._calls and not self._in_flight:
                self._settled.notify_all()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._work.notify_all()
            self._room.notify_all()

    def pending(self) -> dict[str, int]:
        """Calls waiting to run, by call type (scheduler_pending_async_api_calls)."""
        with self._lock:
            return {k: v for k, v in self._counts.pending.items() if v}

    def idle(self) -> bool:
        with self._lock:
            return not self._calls and not self._in_flight

    def wait_idle(self, timeout: float | None) -> bool:
        with self._lock:
            return self._settled.wait_for(lambda: not self._calls and not self._in_flight, timeout)


class APIDispatcher:
    """api_dispatcher.go: runs the queued calls, up to `parallelism` at a time, on threads that end after
    `idle_seconds` without a call."""

    def __init__(self, relevances: Mapping[str, int], *, parallelism: int = DEFAULT_PARALLELISM,
                 max_pending: int = DEFAULT_MAX_PENDING, idle_seconds: float = DEFAULT_IDLE_SECONDS,
                 metrics: SchedulerMetrics | None = None) -> None:
        self.queue = CallQueue(relevances, max_pending)
        self.parallelism = max(1, parallelism)
        self.idle_seconds = idle_seconds
        self.metrics = metrics
        self._lock = threading.Lock()
        self._running = False
        self._started = 0
        self._threads: set[threading.Thread] = set()
        if metrics is not None:
            metrics.watch_api_dispatcher(self.queue)

    def add(self, call: APICall, on_finish: OnFinish | None = None) -> None:
        """Queues a call. CallSkipped: it is not needed (no effect, or a more relevant call is queued)."""
        self.queue.add(call, on_finish)
        self._start_workers()

    def call(self, call: APICall, timeout: float | None = None) -> BaseException | None:
        """Adds the call and waits for its outcome, as a binding cycle waits on its onFinish: the call's error,
        None when it succeeded, or CallSkipped/CallOverwritten. When its object has no call pending or in
        flight, the call runs on this thread, since the thread would only wait for a worker to run it: a
        worker's wake-up and the hand-back to this thread are saved, and per-object order is kept, since a
        call added meanwhile for the object waits in the queue until this one is finalized."""
        done = OnFinish()
        try:
            q = self.queue.add(call, done, run_here=self._is_running())
        except CallSkipped as e:
            return e
        if q is not None:
            self._execute(q)
        else:
            self._start_workers()
        return done.wait(timeout)

    def _is_running(self) -> bool:
        with self._lock:
            return self._running

    def remove_pending(self, uid: str, call_type: str | None = None) -> bool:
        return self.queue.remove_pending(uid, call_type)

    def run(self) -> None:
        """From now on calls are run: a worker starts for each queued call no idle worker will take."""
        with self._lock:
            self._running = True
        self._start_workers()

    def threads(self) -> int:
        """Worker threads alive."""
        return self.queue.workers()

    def _start_workers(self) -> None:
        with self._lock:
            if not self._running:
                return
            while self.queue.claim_worker(self.parallelism):
                self._started += 1
                t = threading.Thread(target=self._work, name=f"api-dispatcher-{self._started}", daemon=True)
                self._threads = {x for x in self._threads if x.is_alive()}
                self._threads.add(t)
                t.start()

    def _work(self) -> None:
        while True:
            q = self.queue.pop(self.idle_seconds)
            if q is None:
                return
            self._execute(q)

    def _execute(self, q: _Queued) -> None:
        """Runs a call the queue handed out (in flight), finalizes it and sends its outcome."""
        start = time.perf_counter()
        err: BaseException | None = None
        try:
            q.call.execute()
        except Exception as e:
            err = e
            log.error('"API call failed" callType="%s" object="%s" err=%s', q.call.call_type, q.call.uid,
                      quote(e))
        if self.metrics is not None:
            self.metrics.async_api_call(q.call.call_type, RESULT_ERROR if err else RESULT_SUCCESS,
                                        time.perf_counter() - start)
        self.queue.finalize(q)
        q.send(err)

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Waits until no call is pending or in flight; False on timeout."""
        return self.queue.wait_idle(timeout)

    def close(self, timeout: float = 5.0) -> None:
        """Calls already queued still run (bounded by timeout); no new call is taken."""
        self.queue.close()
        deadline = time.monotonic() + timeout
        with self._lock:
            threads = list(self._threads)
        for t in threads:
            t.join(max(deadline - time.monotonic(), 0.0))


__all__ = ["APICall", "APIDispatcher", "CallOverwritten", "CallQueue", "CallSkipped", "OnFinish",
           "is_unexpected_error"]

