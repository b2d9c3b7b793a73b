"""The scheduler's view of and writes to a real API server: a ClusterClient and EventRecorder.

Reads come from the informers' stores (as kube-scheduler's listers); writes are the requests
kube-scheduler makes: pods/binding, pods/status patches (PodScheduled, nominatedNodeName,
DisruptionTarget), victim deletion with a UID precondition, and events.k8s.io/v1 Events.
"""

from __future__ import annotations

import bisect
import contextlib
import logging
import queue
import random
import socket
import threading
import time
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
from wasmsched.api.types import Pod, type_meta
from wasmsched.api.wellknown import now_rfc3339
from wasmsched.kube.api import ApiError, KubeApi, TransportError
from wasmsched.kube.codec import decode
from wasmsched.kube.informer import InformerFactory
from wasmsched.util.klog import quote

log = logging.getLogger("wasmsched.kube")

T = TypeVar("T")

POD = RESOURCES["Pod"]
STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json"
MERGE_PATCH = "application/merge-patch+json"
# retry.DefaultBackoff: 4 tries, 10 ms growing fivefold, 10 % jitter.
RETRY_STEPS = 4
RETRY_INITIAL = 0.01
# client-go's events broadcaster: isomorphic events within this window become one Event's series.
EVENT_SERIES_WINDOW = 6 * 60.0
# A series' count reaches the API server when it starts (the second occurrence) and then on this period.
EVENT_SERIES_REFRESH = 30 * 60.0
# ... and the buffer of events waiting to be written (beyond it, events are dropped with a log line).
EVENT_QUEUE_SIZE = 1000
# An event the API server could not be reached for is tried again (client-go's maxTriesPerEvent and
# sleepDuration, jittered by up to a quarter); one it answered with an error is not.
EVENT_MAX_TRIES = 12
EVENT_RETRY_SECONDS = 10.0
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


def _gone(e: ApiError, what: str) -> PodGoneError:
    return PodGoneError(f"{what}: {e.message}")


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


@dataclass
class _Series:
    name: str
    namespace: str
    count: int
    first: float
    last: float
    dirty: bool = False


class EventBroadcaster:
    """events.k8s.io/v1 Events, written by one background thread so scheduling never waits on them.

    As client-go's events broadcaster: an event isomorphic to one written in the last 6 minutes (same
    regarding, related, reason, action, type, note and reporter) is not written again; it becomes the
    first one's `series`: patched at once when the series starts (count 2), then every 30 minutes and
    at shutdown. An event written while the API server cannot be reached (a restart, a network cut) is
    tried again, EVENT_MAX_TRIES times in all, EVENT_RETRY_SECONDS apart; the others are not held up.
    """

    def __init__(self, api: KubeApi, instance: str | None = None,
                 refresh_seconds: float = EVENT_SERIES_REFRESH, retry_seconds: float = EVENT_RETRY_SECONDS) -> None:
        self.api = api
        self.host = instance or socket.gethostname()
        self.refresh_seconds = refresh_seconds
        self.retry_seconds = retry_seconds
        self._queue: queue.Queue[dict[str, Any] | None] = queue.Queue(EVENT_QUEUE_SIZE)
        self._series: dict[tuple[str, ...], _Series] = {}
        # Events to try again: (when, tries so far, event), earliest first.
        self._retries: list[tuple[float, int, dict[str, Any]]] = []
        self._thread: threading.Thread | None = None
        self.written = 0
        self.dropped = 0

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="event-broadcaster", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 2.0) -> None:
        """Writes what is queued (bounded by timeout), then stops."""
        if self._thread is None:
            return
        with contextlib.suppress(queue.Full):
            self._queue.put(None, timeout=timeout)
        self._thread.join(timeout)

    def eventf(self, regarding: Any, related: Any, eventtype: str, reason: str, action: str, note: str,
               controller: str = DEFAULT_CONTROLLER) -> None:
        reg = object_reference(regarding)
        rel = object_reference(related) if related is not None else None
        ev: dict[str, Any] = {
            "apiVersion": "events.k8s.io/v1", "kind": "Event",
            "metadata": {"namespace": reg.get("namespace") or "default",
                         "name": f"{reg.get('name', 'unknown')}.{time.time_ns():x}"},
            "eventTime": now_rfc3339(micro=True),
            "reportingController": controller,
            "reportingInstance": f"{controller}-{self.host}",
            "action": action, "reason": reason, "regarding": reg, "note": note, "type": eventtype,
        }
        if rel:
            ev["related"] = rel
        try:
            self._queue.put_nowait(ev)
        except queue.Full:
            self.dropped += 1
            log.error('"Event dropped: the queue to the API server is full" reason="%s" object="%s"',
                      reason, reg.get("name"))

    def _key(self, ev: dict[str, Any]) -> tuple[str, ...]:
        reg, rel = ev["regarding"], ev.get("related") or {}
        return (reg.get("namespace", ""), reg.get("name", ""), reg.get("uid", ""), rel.get("name", ""),
                ev["reason"], ev["action"], ev["type"], ev["note"], ev["reportingController"])

    def _run(self) -> None:
        next_refresh = time.monotonic() + self.refresh_seconds
        while True:
            wake = min(next_refresh, self._retries[0][0]) if self._retries else next_refresh
            try:
                ev = self._queue.get(timeout=max(wake - time.monotonic(), 0.05))
            except queue.Empty:
                ev = {}
            if ev is None:
                self._refresh()
                return
            if ev:
                self._record(ev)
            self._retry_due()
            if time.monotonic() >= next_refresh:
                self._refresh()
                next_refresh = time.monotonic() + self.refresh_seconds

    def _record(self, ev: dict[str, Any]) -> None:
        now = time.monotonic()
        key = self._key(ev)
        s = self._series.get(key)
        if s is not None and now - s.last < EVENT_SERIES_WINDOW:
            s.count += 1
            s.last = now
            s.dirty = True
            if s.count == 2:
                self._patch_series(s)
            return
        self._write(ev, key, 0)
        self._expire(now)

    def _write(self, ev: dict[str, Any], key: tuple[str, ...], tries: int) -> None:
        ns = ev["metadata"]["namespace"]
        try:
            self.api.request_json("POST", f"/apis/events.k8s.io/v1/namespaces/{ns}/events", body=ev)
        except ApiError as e:
            log.error('"Server rejected event (will not retry!)" reason="%s" object="%s/%s" err=%s',
                      ev["reason"], ns, ev["regarding"].get("name"), quote(e))
            return
        except TransportError as e:
            tries += 1
            if tries >= EVENT_MAX_TRIES:
                self.dropped += 1
                log.error('"Unable to write event (retry limit exceeded!)" reason="%s" object="%s/%s" err=%s',
                          ev["reason"], ns, ev["regarding"].get("name"), quote(e))
                return
            log.error('"Unable to write event (may retry after sleeping)" reason="%s" object="%s/%s" err=%s',
                      ev["reason"], ns, ev["regarding"].get("name"), quote(e))
            due = time.monotonic() + self.retry_seconds * (1 + random.random() / 4)
            bisect.insort(self._retries, (due, tries, ev), key=lambda r: r[0])
            return
        now = time.monotonic()
        self.written += 1
        self._series[key] = _Series(ev["metadata"]["name"], ns, 1, now, now)

    def _retry_due(self) -> None:
        now = time.monotonic()
        while self._retries and self._retries[0][0] <= now:
            _, tries, ev = self._retries.pop(0)
            self._write(ev, self._key(ev), tries)

    def _expire(self, now: float) -> None:
        if len(self._series) < 4096:
            return
        for key in [k for k, s in self._series.items() if now - s.last >= EVENT_SERIES_WINDOW]:
            del self._series[key]

    def _refresh(self) -> None:
        for s in list(self._series.values()):
            if s.dirty:
                self._patch_series(s)

    def _patch_series(self, s: _Series) -> None:
        s.dirty = False
        patch = {"series": {"count": s.count, "lastObservedTime": now_rfc3339(micro=True)}}
        try:
            self.api.request_json("PATCH", f"/apis/events.k8s.io/v1/namespaces/{s.namespace}/events/{s.name}",
                                  body=patch, content_type=MERGE_PATCH)
        except (ApiError, TransportError) as e:
            log.warning('"Could not update event series" event="%s/%s" err=%s', s.namespace, s.name, quote(e))


class KubeCluster:
    """ClusterClient and EventRecorder over an API server and the scheduler's informers."""

    settles_synchronously = False

    def __init__(self, api: KubeApi, informers: InformerFactory, events: EventBroadcaster,
                 profiles: frozenset[str] = frozenset({DEFAULT_CONTROLLER})) -> None:
        self.api = api
        self.informers = informers
        self.events = events
        self.profiles = profiles

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
        """POST pods/binding, as DefaultBinder does (the UID guards against a recreated pod)."""
        meta = pod.metadata
        binding = {"apiVersion": "v1", "kind": "Binding",
                   "metadata": {"name": meta.name, "namespace": meta.namespace, "uid": meta.uid},
                   "target": {"apiVersion": "v1", "kind": "Node", "name": node_name}}
        try:
            self.api.request("POST", POD.path(meta.namespace, meta.name, "binding"), body=binding)
        except ApiError as e:
            if pod_is_gone(e):
                raise _gone(e, f"binding pod {meta.namespace}/{meta.name}") from e
            raise

    def delete_pod(self, pod: Pod, reason: str) -> None:
        """Deletes a preemption victim, with its UID as precondition (a recreated pod is not deleted)."""
        meta = pod.metadata
        body = {"apiVersion": "v1", "kind": "DeleteOptions", "preconditions": {"uid": meta.uid}}
        try:
            self.api.request("DELETE", POD.path(meta.namespace, meta.name), body=body)
        except ApiError as e:
            if pod_is_gone(e):
                raise _gone(e, f"deleting pod {meta.namespace}/{meta.name}") from e
            raise

    def _patch_status(self, pod: Pod, status: dict[str, Any]) -> None:
        meta = pod.metadata
        patch: dict[str, Any] = {"status": status}
        if meta.uid:
            # A patch with the UID fails (409) instead of writing to a pod recreated under the same name.
            patch["metadata"] = {"uid": meta.uid}

        def do() -> None:
            self.api.request("PATCH", POD.path(meta.namespace, meta.name, "status"), body=patch,
                             content_type=STRATEGIC_MERGE_PATCH)
        try:
            retry_on_conflict(do)
        except ApiError as e:
            if pod_is_gone(e):
                raise _gone(e, f"patching pod {meta.namespace}/{meta.name} status") from e
            raise

    def set_nominated_node_name(self, pod: Pod, node_name: str) -> None:
        cur = self.get_pod(pod.metadata.namespace, pod.metadata.name) or pod
        if cur.status.nominatedNodeName == node_name:
            return
        self._patch_status(pod, {"nominatedNodeName": node_name or None})

    def set_pod_condition(self, pod: Pod, ctype: str, status: str, reason: str, message: str) -> None:
        """podutil.UpdatePodCondition + PatchPodStatus: no request when the condition is already so;
        lastTransitionTime moves only when the status changes."""
        cur = self.get_pod(pod.metadata.namespace, pod.metadata.name) or pod
        old = next((c for c in cur.status.conditions if c.type == ctype), None)
        if old is not None and (old.status, old.reason, old.message) == (status, reason, message):
            return
        cond: dict[str, Any] = {"type": ctype, "status": status, "reason": reason, "message": message,
                                "lastProbeTime": None}
        if old is None or old.status != status:
            cond["lastTransitionTime"] = now_rfc3339()
        if cur.metadata.generation:
            cond["observedGeneration"] = cur.metadata.generation
        self._patch_status(pod, {"conditions": [cond]})

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
