"""The scheduling queue: activeQ, backoffQ, unschedulable pods and the nominator
(internal/queue/scheduling_queue.go, nominator.go)."""

from __future__ import annotations

import functools
import heapq
import itertools
import logging
import threading
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from enum import IntEnum
from typing import TYPE_CHECKING, Any

from wasmsched.api.types import Pod
from wasmsched.framework.events import (
    EVENT_FORCE_ACTIVATE,
    EVENT_UNSCHEDULABLE_TIMEOUT,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
    unroll_pod_event,
)
from wasmsched.framework.interface import NominatingInfo, NominatingMode
from wasmsched.framework.pod_shape import PodShapes
from wasmsched.framework.status import is_success
from wasmsched.framework.types import PodInfo, QueuedPodInfo, get_pod_key
from wasmsched.metrics import names as mn
from wasmsched.scheduler.events import pod_scheduling_properties_change

if TYPE_CHECKING:
    from wasmsched.metrics.metrics import SchedulerMetrics

log = logging.getLogger("wasmsched.queue")

DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION = 5 * 60.0


class QueueingStrategy(IntEnum):
    QUEUE_SKIP = 0
    QUEUE_AFTER_BACKOFF = 1
    QUEUE_IMMEDIATELY = 2


@dataclass
class _HintFn:
    plugin: str
    fn: Callable[[Any, Any, Any], QueueingHint] | None


# scheduler name -> [(registered event, [hint fns])]
QueueingHintMap = dict[str, list[tuple[ClusterEvent, list[_HintFn]]]]


def build_queueing_hint_map(
    events: Iterable[tuple[str, ClusterEventWithHint]],
) -> list[tuple[ClusterEvent, list[_HintFn]]]:
    """buildQueueingHintMap: a registration for Pod is unrolled into AssignedPod, UnscheduledPod and TargetPod."""
    out: dict[ClusterEvent, list[_HintFn]] = {}
    for plugin, ev in events:
        hint = _HintFn(plugin, ev.queueing_hint_fn)
        unrolled = unroll_pod_event(ev.event) if ev.event.resource == EventResource.POD else [ev.event]
        for e in unrolled:
            out.setdefault(e, []).append(hint)
    return list(out.items())


class Nominator:
    """Pods nominated to nodes by preemption (nominator.go)."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._node_to_pods: dict[str, list[PodInfo]] = {}
        self._pod_to_node: dict[str, str] = {}

    def add_nominated_pod(self, pi: PodInfo, info: NominatingInfo | None) -> None:
        with self._lock:
            self._delete(pi.pod)
            if info is not None and info.mode == NominatingMode.OVERRIDE:
                node = info.nominated_node_name
            else:
                node = pi.pod.status.nominatedNodeName
            if not node:
                return
            uid = get_pod_key(pi.pod)
            self._pod_to_node[uid] = node
            self._node_to_pods.setdefault(node, []).append(pi)

    def delete_nominated_pod_if_exists(self, pod: Pod) -> None:
        with self._lock:
            self._delete(pod)

    def update_nominated_pod(self, old: Pod, new_pi: PodInfo) -> None:
        with self._lock:
            # An update that neither sets nor clears status.nominatedNodeName keeps the in-memory
            # nomination (it may predate the API write); any other update takes the pod's own value.
            info = None
            if not old.status.nominatedNodeName and not new_pi.pod.status.nominatedNodeName:
                node = self._pod_to_node.get(get_pod_key(old), "")
                if node:
                    info = NominatingInfo(node, NominatingMode.OVERRIDE)
            self.add_nominated_pod(new_pi, info)

    def _delete(self, pod: Pod) -> None:
        uid = get_pod_key(pod)
        node = self._pod_to_node.pop(uid, None)
        if node is None:
            return
        lst = [p for p in self._node_to_pods.get(node, []) if get_pod_key(p.pod) != uid]
        if lst:
            self._node_to_pods[node] = lst
        else:
            self._node_to_pods.pop(node, None)

    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]:
        with self._lock:
            return list(self._node_to_pods.get(node_name, []))

    def has_nominated_pods(self) -> bool:
        return bool(self._pod_to_node)

    def nominated_node_names(self) -> frozenset[str]:
        """The nodes some pod is nominated to."""
        with self._lock:
            return frozenset(self._node_to_pods)

    def nominated_node(self, pod: Pod) -> str:
        with self._lock:
            return self._pod_to_node.get(get_pod_key(pod), "")


class _Heap:
    """A heap of QueuedPodInfo keyed by pod key, with removal, ordered by a less function.

    Entries are invalidated lazily: an entry is live only while its sequence number is the one
    recorded for its key.
    """

    def __init__(self, less: Callable[[QueuedPodInfo, QueuedPodInfo], bool]) -> None:
        self._heap: list[tuple[Any, int, str]] = []
        self._items: dict[str, tuple[QueuedPodInfo, int]] = {}
        self._seq = itertools.count()
        def cmp(a: QueuedPodInfo, b: QueuedPodInfo) -> int:
            return -1 if less(a, b) else (1 if less(b, a) else 0)

        self._key: Callable[[QueuedPodInfo], Any] = functools.cmp_to_key(cmp)

    def use_sort_key(self, key: Callable[[QueuedPodInfo], Any]) -> None:
        """Orders by key(pi) (taken when a pod is pushed) instead of the less function; equal keys keep
        the push order, as before. Only while the heap is empty."""
        if self._items or self._heap:
            raise ValueError("sort key set on a non-empty queue")
        self._key = key

    def push(self, pi: QueuedPodInfo) -> None:
        k = get_pod_key(pi.pod)
        seq = next(self._seq)
        self._items[k] = (pi, seq)
        heapq.heappush(self._heap, (self._key(pi), seq, k))

    def _clean(self) -> None:
        while self._heap:
            _, seq, k = self._heap[0]
            item = self._items.get(k)
            if item is not None and item[1] == seq:
                return
            heapq.heappop(self._heap)

    def peek(self) -> QueuedPodInfo | None:
        self._clean()
        return self._items[self._heap[0][2]][0] if self._heap else None

    def pop(self) -> QueuedPodInfo | None:
        self._clean()
        if not self._heap:
            return None
        _, _, k = heapq.heappop(self._heap)
        return self._items.pop(k)[0]

    def get(self, key: str) -> QueuedPodInfo | None:
        item = self._items.get(key)
        return item[0] if item is not None else None

    def delete(self, key: str) -> QueuedPodInfo | None:
        item = self._items.pop(key, None)
        return item[0] if item is not None else None

    def __len__(self) -> int:
        return len(self._items)

    def list(self) -> list[QueuedPodInfo]:
        return [pi for pi, _ in self._items.values()]


class SchedulingQueue:
    """kube-scheduler's PriorityQueue with queueing hints and in-flight event tracking."""

    def __init__(
        self,
        less: Callable[[QueuedPodInfo, QueuedPodInfo], bool],
        clock: Callable[[], float],
        *,
        pod_initial_backoff: float = 1.0,
        pod_max_backoff: float = 10.0,
        queueing_hints: QueueingHintMap | None = None,
        pre_enqueue: Mapping[str, Callable[[Pod], Any]] | None = None,
        metrics: SchedulerMetrics | None = None,
    ) -> None:
        self._lock = threading.Condition()
        self._metrics = metrics
        self._clock = clock
        self.pod_initial_backoff = pod_initial_backoff
        self.pod_max_backoff = pod_max_backoff
        self.active_q = _Heap(less)
        self.backoff_q = _Heap(lambda a, b: self._backoff_time(a) < self._backoff_time(b))
        self.unschedulable_pods: dict[str, QueuedPodInfo] = {}
        self.gated_pods: dict[str, QueuedPodInfo] = {}
        self.queueing_hints: QueueingHintMap = queueing_hints or {}
        self._pre_enqueue = pre_enqueue if pre_enqueue is not None else {}
        # Pods whose PreEnqueue runs: a plugin activating pods from PreEnqueue (Handle.activate) may name
        # them; they are on their way in already.
        self._entering: set[str] = set()
        self.nominator = Nominator()
        # What the queued pods' specs and statuses were read into, by shape (a workload's replicas share one).
        self.pod_shapes = PodShapes()
        self.scheduling_cycle = 0
        # Events received while pods are in flight (popped, not yet done), checked when one fails. As kube's
        # inFlightEvents: one log shared by all in-flight pods, each remembering where its attempt began
        # (so recording an event costs the same however many pods are in flight), trimmed behind the oldest.
        # An in-flight pod's own updates (TargetPod events) go to the same log, as in kube.
        self._in_flight: dict[str, int] = {}
        self._in_flight_events: deque[tuple[ClusterEvent, Any, Any]] = deque()
        self._in_flight_base = 0  # the sequence number of _in_flight_events[0]
        self._closed = False
        # kube's QueuedPodInfo.UnschedulableCount and ConsecutiveErrorsCount, by pod key: the backoff counts
        # the failures of the latest kind (kept here: QueuedPodInfo has no slot for them)
        self._failures: dict[str, tuple[int, int]] = {}

    # ----- adding pods ------------------------------------------------------------------------

    def _new_queued(self, pod: Pod) -> QueuedPodInfo:
        now = self._clock()
        return QueuedPodInfo(self.pod_info(pod), timestamp=now, initial_attempt_timestamp=None)

    def pod_info(self, pod: Pod) -> PodInfo:
        """The PodInfo of a pod to queue, sharing what pods of its shape have read (pod_shapes)."""
        return PodInfo(pod, self.pod_shapes.of(pod))

    def _run_pre_enqueue(self, qpi: QueuedPodInfo) -> bool:
        fn = self._pre_enqueue.get(qpi.pod.spec.schedulerName)
        if fn is None:
            qpi.gating_plugin = qpi.gating_message = ""
            return True
        key = get_pod_key(qpi.pod)
        self._entering.add(key)
        try:
            st = fn(qpi.pod)
        finally:
            self._entering.discard(key)
        if is_success(st):
            qpi.gating_plugin = qpi.gating_message = ""
            return True
        qpi.gating_plugin = st.plugin or "PreEnqueue"
        qpi.gating_message = st.message()
        return False

    def _move_to_active(self, qpi: QueuedPodInfo, event: str) -> bool:
        """`event` names what moved the pod, as kube's queue_incoming_pods_total{event} does."""
        key = get_pod_key(qpi.pod)
        if not self._run_pre_enqueue(qpi):
            self.unschedulable_pods.pop(key, None)
            self.backoff_q.delete(key)
            if self._metrics is not None and key not in self.gated_pods:
                # kube keeps gated pods among the unschedulable ones, and counts them so.
                self._metrics.pod_incoming(mn.UNSCHEDULABLE_Q, event)
            self.gated_pods[key] = qpi
            return False
        self.gated_pods.pop(key, None)
        self.unschedulable_pods.pop(key, None)
        self.backoff_q.delete(key)
        if qpi.initial_attempt_timestamp is None:
            # The start of the pod's scheduling SLI: its first entry into activeQ (gated time excluded).
            qpi.initial_attempt_timestamp = self._clock()
        self.active_q.push(qpi)
        if self._metrics is not None:
            self._metrics.pod_incoming(mn.ACTIVE_Q, event)
        self._lock.notify_all()
        return True

    def add(self, pod: Pod) -> None:
        with self._lock:
            self._add(pod)

    def _add(self, pod: Pod) -> None:
        qpi = self._new_queued(pod)
        # A new pod may already carry status.nominatedNodeName (written by an earlier scheduler, or in
        # the input): kube records it before the pod can be popped, gated or not.
        self.nominator.add_nominated_pod(qpi.pod_info, None)
        self._move_to_active(qpi, mn.EVENT_UNSCHEDULED_POD_ADD)

    def update(self, old: Pod, new: Pod) -> None:
        """An unscheduled pod changed (PriorityQueue.Update with queueing hints)."""
        with self._lock:
            key = get_pod_key(new)
            # The pod itself is updated: the events are of the resource TargetPod.
            events = pod_scheduling_properties_change(new, old, True)
            if key in self._in_flight:
                # Being scheduled: the update is replayed if its attempt fails. kube appends it to the log
                # every in-flight pod reads (addEventsIfPodInFlight), so others see it too.
                self._in_flight_events.extend((ev, old, new) for ev in events)
                return
            for store in (self.active_q, self.backoff_q):
                qpi = store.get(key)
                if qpi is not None:
                    qpi.pod_info = self.pod_info(new)
                    self.nominator.update_nominated_pod(old, qpi.pod_info)
                    store.delete(key)
                    store.push(qpi)
                    return
            qpi = self.unschedulable_pods.get(key) or self.gated_pods.get(key)
            if qpi is not None:
                qpi.pod_info = self.pod_info(new)
                self.nominator.update_nominated_pod(old, qpi.pod_info)
                for ev in events:
                    strategy = self._is_pod_worth_requeuing(qpi, ev, old, new)
                    if strategy == QueueingStrategy.QUEUE_SKIP:
                        continue
                    self.unschedulable_pods.pop(key, None)
                    self.gated_pods.pop(key, None)
                    # As kube with SchedulerPopFromBackoffQ off: only a move to activeQ ends the loop; after
                    # one to backoffQ a later event may still send the pod to activeQ (Queue from a Pending
                    # plugin). The metrics label is the event's, as kube's requeue passes evt.Label().
                    if self._requeue(qpi, strategy, str(ev)) == "active":
                        break
                return
            # In no queue: added as a new pod (kube's addPod).
            self._add(new)

    def delete(self, pod: Pod) -> None:
        with self._lock:
            key = get_pod_key(pod)
            self.nominator.delete_nominated_pod_if_exists(pod)
            self.active_q.delete(key)
            self.backoff_q.delete(key)
            self.unschedulable_pods.pop(key, None)
            self.gated_pods.pop(key, None)
            self._failures.pop(key, None)

    def activate(self, pods: Iterable[Pod]) -> None:
        with self._lock:
            for pod in pods:
                key = get_pod_key(pod)
                if key in self._entering:
                    continue
                # kube keeps gated pods among the unschedulable ones: activating one runs PreEnqueue again.
                qpi = self.unschedulable_pods.get(key) or self.backoff_q.get(key) or self.gated_pods.get(key)
                if qpi is not None:
                    self._move_to_active(qpi, mn.EVENT_FORCE_ACTIVATE)
                elif key in self._in_flight:
                    # Being scheduled: if it comes back rejected, the activation requeues it (kube records
                    # ForceActivate, addressed to this pod, among the in-flight events).
                    self._in_flight_events.append((EVENT_FORCE_ACTIVATE, None, pod))

    # ----- popping ----------------------------------------------------------------------------

    def wait_for_active(self, timeout: float | None) -> bool:
        """Blocks until activeQ has a pod or the queue is closed, at most `timeout` seconds; True if so."""
        with self._lock:
            return self._lock.wait_for(lambda: len(self.active_q) > 0 or self._closed, timeout)

    def closed(self) -> bool:
        with self._lock:
            return self._closed

    def pop(self) -> QueuedPodInfo | None:
        """The next pod of activeQ, or None when it is empty (never blocks)."""
        with self._lock:
            qpi = self.active_q.pop()
            if qpi is None:
                return None
            qpi.attempts += 1
            self.scheduling_cycle += 1
            self._in_flight[get_pod_key(qpi.pod)] = self._in_flight_base + len(self._in_flight_events)
            return qpi

    def done(self, pod: Pod) -> None:
        with self._lock:
            self._end_in_flight(get_pod_key(pod))

    def _record_in_flight(self, event: ClusterEvent, old: Any, new: Any) -> None:
        if self._in_flight:
            self._in_flight_events.append((event, old, new))

    def _in_flight_events_of(self, key: str) -> list[tuple[ClusterEvent, Any, Any]]:
        start = self._in_flight.get(key)
        if start is None:
            return []
        return list(itertools.islice(self._in_flight_events, start - self._in_flight_base, None))

    def _end_in_flight(self, key: str) -> None:
        if self._in_flight.pop(key, None) is None:
            return
        if not self._in_flight:
            self._in_flight_base += len(self._in_flight_events)
            self._in_flight_events.clear()
            return
        # Pods are popped in sequence: the first in the dict began the oldest attempt still running.
        oldest = next(iter(self._in_flight.values()))
        while self._in_flight_base < oldest:
            self._in_flight_events.popleft()
            self._in_flight_base += 1

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._lock.notify_all()

    # ----- failures ---------------------------------------------------------------------------

    def add_unschedulable_if_not_present(self, qpi: QueuedPodInfo) -> None:
        with self._lock:
            key = get_pod_key(qpi.pod)
            if self.active_q.get(key) or self.backoff_q.get(key) or key in self.unschedulable_pods:
                self._end_in_flight(key)
                return
            unschedulable, errors = self._failures.get(key, (0, 0))
            if not qpi.unschedulable_plugins and not qpi.pending_plugins:
                # came back for an error, not rejected by a plugin
                errors += 1
            else:
                unschedulable, errors = unschedulable + 1, 0
            self._failures[key] = (unschedulable, errors)
            qpi.timestamp = self._clock()
            strategy = self._hint_for_in_flight_pod(qpi)
            self._end_in_flight(key)
            self._requeue(qpi, strategy, mn.EVENT_SCHEDULE_ATTEMPT_FAILURE)

    def _hint_for_in_flight_pod(self, qpi: QueuedPodInfo) -> QueueingStrategy:
        rejectors = qpi.unschedulable_plugins | qpi.pending_plugins
        if not rejectors:
            # Failed for an error, not rejected: retry after backoff.
            return QueueingStrategy.QUEUE_AFTER_BACKOFF
        best = QueueingStrategy.QUEUE_SKIP
        for event, old, new in self._in_flight_events_of(get_pod_key(qpi.pod)):
            s = self._is_pod_worth_requeuing(qpi, event, old, new)
            if s > best:
                best = s
                if best == QueueingStrategy.QUEUE_IMMEDIATELY:
                    break
        return best

    def _requeue(self, qpi: QueuedPodInfo, strategy: QueueingStrategy, event: str) -> str:
        key = get_pod_key(qpi.pod)
        if strategy == QueueingStrategy.QUEUE_SKIP:
            if self._metrics is not None and key not in self.unschedulable_pods:
                self._metrics.pod_incoming(mn.UNSCHEDULABLE_Q, event)
            self.unschedulable_pods[key] = qpi
            return "unschedulable"
        if strategy == QueueingStrategy.QUEUE_AFTER_BACKOFF and self._is_backing_off(qpi):
            self.unschedulable_pods.pop(key, None)
            self.backoff_q.push(qpi)
            if self._metrics is not None:
                self._metrics.pod_incoming(mn.BACKOFF_Q, event)
            return "backoff"
        if self._move_to_active(qpi, event):
            return "active"
        return "gated"

    def _is_pod_worth_requeuing(self, qpi: QueuedPodInfo, event: ClusterEvent, old: Any, new: Any) -> QueueingStrategy:
        rejectors = qpi.unschedulable_plugins | qpi.pending_plugins
        if qpi.gating_plugin:
            # A gated pod waits for the events its PreEnqueue (gating) plugin registered.
            rejectors = rejectors | {qpi.gating_plugin}
        if not rejectors:
            return QueueingStrategy.QUEUE_AFTER_BACKOFF
        if event.is_wildcard():
            # A wildcard event with an object is meant for that pod only (ForceActivate).
            if new is not None and (not isinstance(new, Pod) or get_pod_key(new) != get_pod_key(qpi.pod)):
                return QueueingStrategy.QUEUE_SKIP
            return QueueingStrategy.QUEUE_AFTER_BACKOFF
        hint_map = self.queueing_hints.get(qpi.pod.spec.schedulerName)
        if hint_map is None:
            return QueueingStrategy.QUEUE_AFTER_BACKOFF
        strategy = QueueingStrategy.QUEUE_SKIP
        for registered, fns in hint_map:
            if not registered.match(event):
                continue
            for h in fns:
                if h.plugin not in rejectors:
                    continue
                hint = QueueingHint.QUEUE
                if h.fn is not None:
                    try:
                        hint = h.fn(qpi.pod, old, new)
                    except Exception as e:  # a failing hint must not lose the pod: requeue it
                        log.error("queueing hint of plugin %s failed: %s", h.plugin, e)
                        hint = QueueingHint.QUEUE
                if hint == QueueingHint.QUEUE_SKIP:
                    continue
                if h.plugin in qpi.pending_plugins:
                    return QueueingStrategy.QUEUE_IMMEDIATELY
                if not qpi.pending_plugins:
                    return QueueingStrategy.QUEUE_AFTER_BACKOFF
                strategy = QueueingStrategy.QUEUE_AFTER_BACKOFF
        return strategy

    def move_all_to_active_or_backoff_queue(self, event: ClusterEvent, old: Any = None, new: Any = None,
                                            pre_check: Callable[[Pod], bool] | None = None) -> int:
        with self._lock:
            moved = 0
            label = str(event) if self._metrics is not None else ""  # queue_incoming_pods_total{event}
            # PreEnqueue, run for each pod moved, may activate others (Handle.activate): a pod of the lists taken
            # here may have moved by the time its turn comes.
            for key, qpi in list(self.unschedulable_pods.items()):
                if self.unschedulable_pods.get(key) is not qpi:
                    continue
                if pre_check is not None and not pre_check(qpi.pod):
                    continue
                strategy = self._is_pod_worth_requeuing(qpi, event, old, new)
                if strategy == QueueingStrategy.QUEUE_SKIP:
                    continue
                del self.unschedulable_pods[key]
                self._requeue(qpi, strategy, label)
                moved += 1
            for key, qpi in list(self.gated_pods.items()):
                if self.gated_pods.get(key) is not qpi:
                    continue
                if pre_check is not None and not pre_check(qpi.pod):
                    continue
                strategy = self._is_pod_worth_requeuing(qpi, event, old, new)
                if strategy == QueueingStrategy.QUEUE_SKIP:
                    continue
                del self.gated_pods[key]
                if self._requeue(qpi, strategy, label) != "gated":
                    moved += 1
            self._record_in_flight(event, old, new)
            return moved

    # ----- time -------------------------------------------------------------------------------

    def _backoff_duration(self, qpi: QueuedPodInfo) -> float:
        # kube's getBackoffTime: the consecutive errors when the last attempt ended in one, else the
        # rejections (not the attempts: a pod that alternates between the two backs off by the latest kind)
        unschedulable, errors = self._failures.get(get_pod_key(qpi.pod), (0, 0))
        count = errors if errors > 0 else unschedulable
        if count == 0:
            # A pod that never failed an attempt owes no backoff penalty.
            return 0.0
        d = self.pod_initial_backoff
        for _ in range(1, count):
            if d > self.pod_max_backoff - d:
                return self.pod_max_backoff
            d += d
        return d

    def _backoff_time(self, qpi: QueuedPodInfo) -> float:
        return qpi.timestamp + self._backoff_duration(qpi)

    def _is_backing_off(self, qpi: QueuedPodInfo) -> bool:
        if qpi.gating_plugin:
            # A gated pod never attempted scheduling: once its gate lifts it goes straight to activeQ.
            return False
        return self._backoff_time(qpi) > self._clock()

    def flush_backoff_q_completed(self) -> int:
        with self._lock:
            moved = 0
            now = self._clock()
            while True:
                qpi = self.backoff_q.peek()
                if qpi is None or self._backoff_time(qpi) > now:
                    break
                self.backoff_q.pop()
                if self._move_to_active(qpi, mn.EVENT_BACKOFF_COMPLETE):
                    moved += 1
            return moved

    def flush_unschedulable_pods_leftover(
        self, max_duration: float = DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION
    ) -> int:
        with self._lock:
            now = self._clock()
            stale = [q for q in self.unschedulable_pods.values() if now - q.timestamp > max_duration]
            for qpi in stale:
                key = get_pod_key(qpi.pod)
                if self.unschedulable_pods.get(key) is not qpi:
                    continue  # activated meanwhile by a PreEnqueue plugin of a pod moved before it
                del self.unschedulable_pods[key]
                self._requeue(qpi, QueueingStrategy.QUEUE_AFTER_BACKOFF, mn.EVENT_UNSCHEDULABLE_TIMEOUT)
            if stale:
                self._record_in_flight(EVENT_UNSCHEDULABLE_TIMEOUT, None, None)
            return len(stale)

    def next_backoff_expiry(self) -> float | None:
        with self._lock:
            qpi = self.backoff_q.peek()
            return None if qpi is None else self._backoff_time(qpi)

    # ----- inspection -------------------------------------------------------------------------

    def pending_pods(self) -> dict[str, list[QueuedPodInfo]]:
        with self._lock:
            return {
                "active": self.active_q.list(),
                "backoff": self.backoff_q.list(),
                "unschedulable": list(self.unschedulable_pods.values()),
                "gated": list(self.gated_pods.values()),
            }

    def in_flight_count(self) -> int:
        with self._lock:
            return len(self._in_flight)

    def has_work(self) -> bool:
        with self._lock:
            return len(self.active_q) > 0
