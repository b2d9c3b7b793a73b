"""The scheduler's view of and writes to a real API server: a ClusterClient and EventRecorder.

Reads come from the informers' stores (as kube-scheduler's listers); writes are the requests
kube-scheduler makes: pods/binding, pods/status patches (PodScheduled, nominatedNodeName,
DisruptionTarget), victim deletion with a UID precondition, and events.k8s.io/v1 Events.
"""

from __future__ import annotations

import bisect
import contextlib
import hashlib
import logging
import math
import queue
import random
import socket
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from google.protobuf.message import Message

from wasmsched.api.convert import message_to_dict
from wasmsched.api.errors import (
    is_conflict,
    is_internal_error,
    is_not_found,
    is_service_unavailable,
    is_timeout,
    is_too_many_requests,
)
from wasmsched.api.kinds import RESOURCES
from wasmsched.api.types import Binding, EventsV1Event, Pod, type_meta
from wasmsched.api.wellknown import now_rfc3339
from wasmsched.framework.interface import NominatingInfo, NominatingMode, PodCondition
from wasmsched.kube.api import ApiError, KubeApi, TransportError
from wasmsched.kube.codec import decode
from wasmsched.kube.informer import InformerFactory
from wasmsched.scheduler.api_calls import POD_STATUS_PATCH, PodBindingCall, PodStatusPatchCall, call_uid
from wasmsched.scheduler.api_dispatcher import APIDispatcher, CallSkipped, is_unexpected_error
from wasmsched.util.klog import quote
from wasmsched.util.threadpool import ElasticPool, PoolShutDown

log = logging.getLogger("wasmsched.kube")

T = TypeVar("T")

POD = RESOURCES["Pod"]
STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json"
MERGE_PATCH = "application/merge-patch+json"
# retry.DefaultBackoff: 4 tries, 10 ms growing fivefold, 10 % jitter.
RETRY_STEPS = 4
RETRY_INITIAL = 0.01
# How long a binding whose answer was lost asks the server whether it was done (KubeCluster._bound_after_all):
# an API server restarting answers again within this.
BINDING_CONFIRM_SECONDS = 30.0
# client-go's events broadcaster: isomorphic events within this window become one Event's series.
EVENT_SERIES_WINDOW = 6 * 60.0
# A series' count reaches the API server when it starts (the second occurrence) and then on this period.
EVENT_SERIES_REFRESH = 30 * 60.0
# ... and the buffer of events waiting to be written (beyond it, events are dropped with a log line).
# client-go's is 1,000, for a writer that keeps pace with the bindings; here a backlog is bound faster
# than the API server takes its events (both compete for it, and bindings come first), so the buffer
# holds what a 10,000-pod backlog leaves behind (about 1 KiB an event) until it is written.
EVENT_QUEUE_SIZE = 10000
# An event the API server could not be reached for is tried again (client-go's maxTriesPerEvent and
# sleepDuration, jittered by up to a quarter); one it answered with an error is not.
EVENT_MAX_TRIES = 12
EVENT_RETRY_SECONDS = 10.0
# At stop, how often the events that could not be written are tried again until stop's deadline.
STOP_RETRY_SECONDS = 1.0
# How long a series' patch waits for its first event's write (in flight when the patch is made).
SERIES_CREATE_WAIT = 5.0
# Event writes in flight at once: EVENT_WRITERS_IDLE while few events wait, so that events take little of
# the API server from the bindings; one more for every EVENTS_PER_WRITER waiting, up to EVENT_WRITERS.
EVENT_WRITERS_IDLE = 4
EVENTS_PER_WRITER = 50
EVENT_WRITERS = 32
# A writer with nothing to write for this long ends (util/threadpool.py).
EVENT_WRITER_IDLE_SECONDS = 10.0
DEFAULT_CONTROLLER = "default-scheduler"


class PodGoneError(LookupError):
    """The pod (or node) the write was for no longer exists (404), or is another object now (UID)."""


def pod_is_gone(e: ApiError) -> bool:
    """The pod is not there (NotFound), or is another pod now: its UID differs from the precondition (a
    Conflict whose message says so; kube's Status has no other mark of a failed precondition)."""
    return is_not_found(e) or (is_conflict(e) and "precondition" in e.message.lower())


def _retriable(e: Exception) -> bool:
    """RetriableWithConflict: conflicts, server-side timeouts and throttling, and lost connections."""
    if isinstance(e, TransportError):
        return True
    return isinstance(e, ApiError) and not pod_is_gone(e) and (
        is_conflict(e) or is_too_many_requests(e) or is_internal_error(e) or is_service_unavailable(e)
        or is_timeout(e))


def retry_on_conflict(fn: Callable[[], T], rng: random.Random | None = None) -> T:
    delay = RETRY_INITIAL
    r = rng or random
    for step in range(RETRY_STEPS):
        try:
            return fn()
        except (ApiError, TransportError) as e:
            if step == RETRY_STEPS - 1 or not _retriable(e):
                raise
            time.sleep(delay * (1 + 0.1 * r.random()))
            delay *= 5
    raise AssertionError("unreachable")


def object_reference(obj: Any) -> dict[str, str]:
    """An ObjectReference (events.k8s.io regarding/related) of a message, or of a guest's reference."""
    if isinstance(obj, Mapping):
        keys = {"Kind": "kind", "APIVersion": "apiVersion", "Name": "name", "Namespace": "namespace",
                "UID": "uid", "ResourceVersion": "resourceVersion"}
        return {v: str(obj.get(k, "")) for k, v in keys.items() if obj.get(k)}
    assert isinstance(obj, Message)
    meta = obj.metadata  # type: ignore[attr-defined]
    gvk = type_meta(obj) or ("v1", obj.DESCRIPTOR.name)
    ref = {"apiVersion": gvk[0], "kind": gvk[1], "name": meta.name, "uid": meta.uid,
           "resourceVersion": meta.resourceVersion}
    if meta.namespace:
        ref["namespace"] = meta.namespace
    return {k: v for k, v in ref.items() if v}


@dataclass(slots=True)
class _Series:
    """One per isomorphic event of the last 6 minutes (tens of thousands in a backlog): kept small, without
    a lock of its own (the broadcaster's `_created` condition is shared)."""

    name: str
    namespace: str
    count: int
    last: float
    dirty: bool = False
    # Whether the series' first event is written (its patches wait for it, on EventBroadcaster._created).
    created: bool = False
    # The server refused the first event: the next isomorphic one is written as a new event.
    refused: bool = False


def _new_series(ev: dict[str, Any], now: float) -> _Series:
    # Namespaces are few and repeat: one string each.
    return _Series(ev["metadata"]["name"], sys.intern(ev["metadata"]["namespace"]), 1, now)


def _event_message(ev: dict[str, Any]) -> EventsV1Event:
    """The events.k8s.io/v1 Event of a queued event (built field by field: the writers' hot path)."""
    m = EventsV1Event()
    m.metadata.name, m.metadata.namespace = ev["metadata"]["name"], ev["metadata"]["namespace"]
    # MicroTime: microseconds, as the API server keeps them.
    m.eventTime.seconds, nanos = divmod(ev["eventTime"], 1_000_000_000)
    m.eventTime.nanos = nanos // 1000 * 1000
    m.reportingController, m.reportingInstance = ev["reportingController"], ev["reportingInstance"]
    m.action, m.reason, m.note, m.type = ev["action"], ev["reason"], ev["note"], ev["type"]
    for field_name in ("regarding", "related"):
        ref = ev.get(field_name)
        if ref:
            target = getattr(m, field_name)
            for k, v in ref.items():
                setattr(target, k, v)
    return m


class EventBroadcaster:
    """events.k8s.io/v1 Events, written off the scheduling path, up to EVENT_WRITERS at a time.

    As client-go's events broadcaster: an event isomorphic to one written in the last 6 minutes (same
    regarding, related, reason, action, type, note and reporter) is not written again; it becomes the
    first one's `series`: patched at once when the series starts (count 2), then every 30 minutes and
    at shutdown. An event written while the API server cannot be reached (a restart, a network cut) is
    tried again, EVENT_MAX_TRIES times in all, EVENT_RETRY_SECONDS apart; the others are not held up.

    One thread keeps the series (so deciding what to write needs no lock); the writes themselves run on
    writer threads, over the event client's own connection and rate limit: EVENT_WRITERS_IDLE at a time
    while few events wait (the API server's time goes to the bindings), more as the queue grows, up to
    EVENT_WRITERS. What waits, waits in the bounded queue: an event that finds it full is dropped and
    counted, as client-go's broadcaster drops it.
    """

    def __init__(self, api: KubeApi, instance: str | None = None,
                 refresh_seconds: float = EVENT_SERIES_REFRESH, retry_seconds: float = EVENT_RETRY_SECONDS,
                 writers: int = EVENT_WRITERS) -> None:
        self.api = api
        self.host = instance or socket.gethostname()
        self.refresh_seconds = refresh_seconds
        self.retry_seconds = retry_seconds
        self._queue: queue.Queue[dict[str, Any] | None] = queue.Queue(EVENT_QUEUE_SIZE)
        # Least recently seen first (each hit moves its series to the end), so the expired ones are at the
        # front: expiring costs nothing per event however many series there are.
        self._series: OrderedDict[bytes, _Series] = OrderedDict()
        # Events to try again: (when, tries so far, event), earliest first; the writers add to it.
        self._retries: list[tuple[float, int, dict[str, Any]]] = []
        self._retries_lock = threading.Lock()
        # Notified when a series' first event is written (a patch of its count waits for that).
        self._created = threading.Condition()
        self._thread: threading.Thread | None = None
        self._writers = writers
        self._pool: ElasticPool | None = None
        self._counts_lock = threading.Condition()
        # Writes submitted and not finished (stop waits for them, bounded).
        self._writing = 0
        self.written = 0
        self.dropped = 0
        # Events neither written nor given up on when stop() returned (queued, waiting to be tried again, or
        # being written).
        self.unwritten = 0
        self._stop_deadline = math.inf

    def start(self) -> None:
        self._pool = ElasticPool(self._writers, EVENT_WRITER_IDLE_SECONDS, "event-writer")
        self._thread = threading.Thread(target=self._run, name="event-broadcaster", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 2.0) -> None:
        """Writes what is queued and tries the events waiting to be tried again until they are written or
        `timeout` has passed, then stops; what is left is counted in `unwritten` and logged."""
        if self._thread is None:
            return
        deadline = self._stop_deadline = time.monotonic() + timeout
        with contextlib.suppress(queue.Full):
            self._queue.put(None, timeout=timeout)
        self._thread.join(max(deadline - time.monotonic(), 0.0))
        with self._counts_lock:
            self._counts_lock.wait_for(lambda: self._writing == 0, max(deadline - time.monotonic(), 0.0))
            writing = self._writing
        with self._retries_lock:
            retrying = len(self._retries)
        queued = sum(1 for ev in list(self._queue.queue) if ev)
        self.unwritten = queued + retrying + writing
        if self.unwritten:
            # client-go's broadcaster loses these silently when its process ends; a user should know.
            log.warning('"Events not written at shutdown" count=%d queued=%d retrying=%d writing=%d',
                        self.unwritten, queued, retrying, writing)
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)

    def eventf(self, regarding: Any, related: Any, eventtype: str, reason: str, action: str, note: str,
               controller: str = DEFAULT_CONTROLLER) -> None:
        reg = object_reference(regarding)
        rel = object_reference(related) if related is not None else None
        now_ns = time.time_ns()
        ev: dict[str, Any] = {
            "metadata": {"namespace": reg.get("namespace") or "default",
                         "name": f"{reg.get('name', 'unknown')}.{now_ns:x}"},
            "eventTime": now_ns,
            "reportingController": controller,
            "reportingInstance": f"{controller}-{self.host}",
            "action": action, "reason": reason, "regarding": reg, "note": note, "type": eventtype,
        }
        if rel:
            ev["related"] = rel
        try:
            self._queue.put_nowait(ev)
        except queue.Full:
            self._count_dropped()
            log.error('"Event dropped: the queue to the API server is full" reason="%s" object="%s"',
                      reason, reg.get("name"))

    def _count_dropped(self) -> None:
        with self._counts_lock:
            self.dropped += 1

    def _key(self, ev: dict[str, Any]) -> bytes:
        """What makes two events isomorphic (client-go's getKey), as a 16-byte digest rather than the strings:
        a backlog's window holds tens of thousands of series, nearly all of them Scheduled events that never
        repeat, and the strings would cost ~400 bytes each."""
        reg, rel = ev["regarding"], ev.get("related") or {}
        fields = (reg.get("namespace", ""), reg.get("name", ""), reg.get("uid", ""), rel.get("name", ""),
                  ev["reason"], ev["action"], ev["type"], ev["note"], ev["reportingController"])
        return hashlib.blake2b(repr(fields).encode(), digest_size=16).digest()

    def _run(self) -> None:
        next_refresh = time.monotonic() + self.refresh_seconds
        while True:
            with self._retries_lock:
                first_retry = self._retries[0][0] if self._retries else None
            wake = next_refresh if first_retry is None else min(next_refresh, first_retry)
            try:
                ev = self._queue.get(timeout=min(max(wake - time.monotonic(), 0.05), 0.5))
            except queue.Empty:
                ev = {}
            if ev is None:
                self._drain()
                self._refresh()
                return
            if ev:
                self._record(ev)
            self._retry_due()
            if time.monotonic() >= next_refresh:
                self._refresh()
                next_refresh = time.monotonic() + self.refresh_seconds

    def _drain(self) -> None:
        """Stopping: the events waiting to be tried again are tried now and then every STOP_RETRY_SECONDS
        until they are written or stop's deadline is near, rather than lost with the process: a process
        most often stops for want of the API server (a lost lease while it restarts), which is back in
        seconds. Each try counts against EVENT_MAX_TRIES as before."""
        while True:
            self._retry_due(everything=True)
            with self._counts_lock:
                self._counts_lock.wait_for(lambda: self._writing == 0,
                                           max(self._stop_deadline - time.monotonic(), 0.0))
            with self._retries_lock:
                left = bool(self._retries)
            if not left or time.monotonic() + STOP_RETRY_SECONDS >= self._stop_deadline:
                return
            time.sleep(STOP_RETRY_SECONDS)

    def _record(self, ev: dict[str, Any]) -> None:
        now = time.monotonic()
        key = self._key(ev)
        s = self._series.get(key)
        if s is not None and not s.refused and now - s.last < EVENT_SERIES_WINDOW:
            s.count += 1
            s.last = now
            s.dirty = True
            self._series.move_to_end(key)
            if s.count == 2:
                self._patch_series(s)
            return
        self._series.pop(key, None)
        self._expire(now)
        s = self._series[key] = _new_series(ev, now)
        self._submit(self._write, ev, s, 0)

    def _submit(self, fn: Callable[..., None], *args: Any) -> None:
        """Hands a write to the writers once one is free: what waits stays in the bounded queue."""
        assert self._pool is not None
        with self._counts_lock:
            # Looked at again as writes finish and, as the queue grows, every 50 ms.
            while self._writing >= self._writers_wanted():
                self._counts_lock.wait(0.05)
            self._writing += 1
        try:
            self._pool.submit(self._counted, fn, *args)
        except PoolShutDown:  # stop() gave up waiting
            self._count_dropped()
            self._counted(lambda: None)

    def _writers_wanted(self) -> int:
        return min(EVENT_WRITERS_IDLE + self._queue.qsize() // EVENTS_PER_WRITER, self._writers)

    def _counted(self, fn: Callable[..., None], *args: Any) -> None:
        try:
            fn(*args)
        except Exception:
            # The pool would keep the exception in a future nobody reads: the event would be lost unseen.
            if fn == self._write:
                self._count_dropped()
                log.exception('"Event writer failed; the event is dropped"')
            else:  # a series' count: the Event itself is written, and the next refresh writes the count
                log.exception('"Event writer failed; the series count is not updated"')
        finally:
            with self._counts_lock:
                self._writing -= 1
                self._counts_lock.notify_all()

    def _write(self, ev: dict[str, Any], s: _Series, tries: int) -> None:
        """On a writer thread: one POST; on a transport failure the event is queued to be tried again."""
        ns = ev["metadata"]["namespace"]
        try:
            self.api.create(f"/apis/events.k8s.io/v1/namespaces/{ns}/events", _event_message(ev), "events.k8s.io/v1",
                            "Event")
        except ApiError as e:
            log.error('"Server rejected event (will not retry!)" reason="%s" object="%s/%s" err=%s',
                      ev["reason"], ns, ev["regarding"].get("name"), quote(e))
            s.refused = True
            return
        except TransportError as e:
            tries += 1
            if tries >= EVENT_MAX_TRIES:
                self._count_dropped()
                log.error('"Unable to write event (retry limit exceeded!)" reason="%s" object="%s/%s" err=%s',
                          ev["reason"], ns, ev["regarding"].get("name"), quote(e))
                return
            log.error('"Unable to write event (may retry after sleeping)" reason="%s" object="%s/%s" err=%s',
                      ev["reason"], ns, ev["regarding"].get("name"), quote(e))
            due = time.monotonic() + self.retry_seconds * (1 + random.random() / 4)
            with self._retries_lock:
                bisect.insort(self._retries, (due, tries, ev), key=lambda r: r[0])
            # The broadcaster may be waiting past `due`: an empty event makes it look at the retries again
            # (a full queue keeps it busy anyway).
            with contextlib.suppress(queue.Full):
                self._queue.put_nowait({})
            return
        with self._counts_lock:
            self.written += 1
        with self._created:
            s.created = True
            self._created.notify_all()

    def _retry_due(self, everything: bool = False) -> None:
        """Submits the events whose time to be tried again has come (`everything`: all of them, at stop)."""
        now = time.monotonic()
        due = []
        with self._retries_lock:
            while self._retries and (everything or self._retries[0][0] <= now):
                due.append(self._retries.pop(0))
        for _, tries, ev in due:
            key = self._key(ev)
            s = self._series.get(key)
            if s is None or s.name != ev["metadata"]["name"]:
                self._series.pop(key, None)
                s = self._series[key] = _new_series(ev, now)
            self._submit(self._write, ev, s, tries)

    def _expire(self, now: float) -> None:
        """Forgets the series not seen for EVENT_SERIES_WINDOW (client-go's finishSeries drops them every
        6 minutes; here as they age, from the front of the order)."""
        series = self._series
        while series:
            key, oldest = next(iter(series.items()))
            if now - oldest.last < EVENT_SERIES_WINDOW:
                return
            del series[key]

    def _refresh(self) -> None:
        for s in list(self._series.values()):
            if s.dirty:
                self._patch_series(s)

    def _patch_series(self, s: _Series) -> None:
        s.dirty = False
        patch = {"series": {"count": s.count, "lastObservedTime": now_rfc3339(micro=True)}}
        self._submit(self._write_series, s, patch)

    def _write_series(self, s: _Series, patch: dict[str, Any]) -> None:
        # The first event's POST was submitted before this patch, so it is running or done by now; if it
        # has not been written (it waits to be tried again), the count is written at the next refresh.
        with self._created:
            created = self._created.wait_for(lambda: s.created, SERIES_CREATE_WAIT)
        if not created:
            s.dirty = True
            return
        try:
            self.api.request_json("PATCH", f"/apis/events.k8s.io/v1/namespaces/{s.namespace}/events/{s.name}",
                                  body=patch, content_type=MERGE_PATCH)
        except (ApiError, TransportError) as e:
            log.warning('"Could not update event series" event="%s/%s" err=%s', s.namespace, s.name, quote(e))


class KubeCluster:
    """ClusterClient and EventRecorder over an API server and the scheduler's informers."""

    settles_synchronously = False

    def __init__(self, api: KubeApi, informers: InformerFactory, events: EventBroadcaster,
                 profiles: frozenset[str] = frozenset({DEFAULT_CONTROLLER}),
                 dispatcher: APIDispatcher | None = None) -> None:
        self.api = api
        self.informers = informers
        self.events = events
        self.profiles = profiles
        # Bindings and status patches go through it (kube's SchedulerAsyncAPICalls); None: made in place.
        self.dispatcher = dispatcher
        if dispatcher is not None:
            # A deleted pod's pending status patch would only fail: it is dropped (a write in flight runs out).
            # A pending binding is not: its failure (404) is what unreserves the pod in its binding cycle.
            informers.watch("Pod", None, None, self._drop_pending_calls)

    def _drop_pending_calls(self, pod: Pod) -> None:
        assert self.dispatcher is not None
        self.dispatcher.remove_pending(call_uid(pod), POD_STATUS_PATCH)

    # ----- reads (the informers' stores) ---------------------------------------------------

    def get_pod(self, namespace: str, name: str) -> Pod | None:
        return self.informers.informer("Pod").get(f"{namespace}/{name}")  # type: ignore[no-any-return]

    def list_pod_disruption_budgets(self) -> list[Any]:
        return self.informers.informer("PodDisruptionBudget").list()

    def get_namespace_labels(self, namespace: str) -> Mapping[str, str] | None:
        ns = self.informers.informer("Namespace").get(namespace)
        return None if ns is None else dict(ns.metadata.labels)

    def list_in_namespace(self, kind: str, namespace: str) -> list[Any]:
        if kind not in RESOURCES or not RESOURCES[kind].available():
            return []
        return self.informers.informer(kind).list_namespace(namespace)

    def get_object(self, kind: str, key: str) -> Any | None:
        if kind not in RESOURCES or not RESOURCES[kind].available():
            return None
        return self.informers.informer(kind).get(key)

    def list_objects(self, kind: str) -> list[Any]:
        if kind not in RESOURCES or not RESOURCES[kind].available():
            return []
        return self.informers.informer(kind).list()

    # ----- writes ----------------------------------------------------------------------------

    def update_object(self, obj: Any, subresource: str = "") -> Any:
        """PUT of the object (or of its status), its resourceVersion as the precondition (409 when stale)."""
        resource = RESOURCES[obj.DESCRIPTOR.name]
        meta = obj.metadata
        data, ctype = self.api.request("PUT", resource.path(meta.namespace, meta.name, subresource),
                                       body=message_to_dict(obj))
        return decode(data, ctype, resource.message_class)

    def bind(self, pod: Pod, node_name: str) -> None:
        """DefaultBinder's write: through the API dispatcher when there is one (waiting for its outcome,
        as kube's binder waits on the call's onFinish; a skipped call is no failure, as in kube's
        WaitOnFinish), else POST pods/binding now."""
        meta = pod.metadata
        if self.dispatcher is None:
            self.post_binding(meta.namespace, meta.name, meta.uid, node_name)
            return
        err = self.dispatcher.call(PodBindingCall(self, pod, node_name))
        if is_unexpected_error(err):
            assert err is not None
            raise err

    def post_binding(self, namespace: str, name: str, uid: str, node_name: str) -> None:
        """POST pods/binding, as DefaultBinder does (the UID guards against a recreated pod)."""
        binding = Binding()
        binding.metadata.name, binding.metadata.namespace, binding.metadata.uid = name, namespace, uid
        binding.target.apiVersion, binding.target.kind, binding.target.name = "v1", "Node", node_name
        try:
            self.api.create(POD.path(namespace, name, "binding"), binding, "v1", "Binding")
        except ApiError as e:
            if pod_is_gone(e):
                raise PodGoneError(f"binding pod {namespace}/{name}: {e.message}") from e
            raise
        except TransportError as e:
            if not self._bound_after_all(namespace, name, uid, node_name):
                raise
            log.info('"Binding confirmed after its answer was lost" pod="%s/%s" node="%s" err=%s',
                     namespace, name, node_name, quote(e))

    def _bound_after_all(self, namespace: str, name: str, uid: str, node_name: str) -> bool:
        """Whether a binding whose answer never came was done: the pod (this UID) is on `node_name`. The
        server may have bound it before the connection broke (an API server restarting, a reset), and a
        POST is not sent again. kube-scheduler treats it as failed: it unreserves the pod, which its
        informer then shows bound, without a Scheduled event or a count. Asked every second while the
        server cannot answer, for BINDING_CONFIRM_SECONDS."""
        deadline = time.monotonic() + BINDING_CONFIRM_SECONDS
        while True:
            try:
                # each GET within what is left (a black-holed connection would otherwise hold it 70 s)
                pod = self.api.get(POD, namespace, name, timeout=max(deadline - time.monotonic(), 1.0))
            except (ApiError, TransportError):
                if time.monotonic() + 1.0 >= deadline:
                    return False
                time.sleep(1.0)
                continue
            return pod is not None and pod.metadata.uid == uid and pod.spec.nodeName == node_name

    def delete_pod(self, pod: Pod, reason: str) -> None:
        """Deletes a preemption victim, with its UID as precondition (a recreated pod is not deleted)."""
        meta = pod.metadata
        body = {"apiVersion": "v1", "kind": "DeleteOptions", "preconditions": {"uid": meta.uid}}
        try:
            self.api.request("DELETE", POD.path(meta.namespace, meta.name), body=body)
        except ApiError as e:
            if pod_is_gone(e):
                raise PodGoneError(f"deleting pod {meta.namespace}/{meta.name}: {e.message}") from e
            raise

    def patch_pod_status(self, namespace: str, name: str, uid: str, status: dict[str, object]) -> None:
        """A strategic-merge patch of pods/status (conditions merge by type), retried on conflicts."""
        patch: dict[str, Any] = {"status": status}
        if uid:
            # A patch with the UID fails (409) instead of writing to a pod recreated under the same name.
            patch["metadata"] = {"uid": uid}

        def do() -> None:
            self.api.request("PATCH", POD.path(namespace, name, "status"), body=patch,
                             content_type=STRATEGIC_MERGE_PATCH)
        try:
            retry_on_conflict(do)
        except ApiError as e:
            if pod_is_gone(e):
                raise PodGoneError(f"patching pod {namespace}/{name} status: {e.message}") from e
            raise

    def _update_status(self, pod: Pod, conditions: list[PodCondition], nominating: NominatingInfo | None) -> None:
        """kube's updatePod: computed against the informer's current pod; nothing is written when nothing
        would change. With a dispatcher the write is queued (merged with the pod's pending one) and this
        returns at once; a failure is logged by the dispatcher and the pod's next attempt writes again."""
        cur = self.get_pod(pod.metadata.namespace, pod.metadata.name) or pod
        call = PodStatusPatchCall(self, cur, conditions, nominating, now_rfc3339())
        if self.dispatcher is None:
            call.execute()
            return
        with contextlib.suppress(CallSkipped):
            self.dispatcher.add(call)

    def update_pod_status(self, pod: Pod, condition: PodCondition | None, nominating: NominatingInfo | None) -> None:
        self._update_status(pod, [condition] if condition is not None else [], nominating)

    def set_nominated_node_name(self, pod: Pod, node_name: str) -> None:
        """Preemption's clearNominatedNodeName: through the API dispatcher, as kube's APICacher."""
        self._update_status(pod, [], NominatingInfo(node_name, NominatingMode.OVERRIDE))

    def set_pod_condition(self, pod: Pod, ctype: str, status: str, reason: str, message: str) -> None:
        """podutil.UpdatePodCondition + PatchPodStatus, written now (a victim's DisruptionTarget must land
        before its deletion): no request when the condition is already so; lastTransitionTime moves only
        when the status changes."""
        cur = self.get_pod(pod.metadata.namespace, pod.metadata.name) or pod
        PodStatusPatchCall(self, cur, [PodCondition(ctype, status, reason, message)], None, now_rfc3339()).execute()

    # ----- EventRecorder ---------------------------------------------------------------------

    def eventf(self, regarding: Any, related: Any, eventtype: str, reason: str, action: str, note: str) -> None:
        self.events.eventf(regarding, related, eventtype, reason, action, note, self._controller(regarding, related))

    def _controller(self, regarding: Any, related: Any) -> str:
        """The profile whose recorder kube would use: the related pod's (a preemptor), else the pod's own."""
        for obj in (related, regarding):
            if isinstance(obj, Pod) and obj.spec.schedulerName in self.profiles:
                return obj.spec.schedulerName
        return next(iter(sorted(self.profiles))) if len(self.profiles) == 1 else DEFAULT_CONTROLLER


__all__ = ["EventBroadcaster", "KubeCluster", "PodGoneError", "pod_is_gone", "retry_on_conflict"]
