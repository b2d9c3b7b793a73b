"""Ported from kube-scheduler's backend/queue/scheduling_queue_test.go, backoff_queue_test.go and
nominator tests: ordering, backoff, queueing hints, in-flight events, gated pods, the nominator."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from wasmsched.api.types import Node, Pod
from wasmsched.framework.events import (
    EVENT_FORCE_ACTIVATE,
    EVENT_UNSCHEDULABLE_TIMEOUT,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
)
from wasmsched.framework.interface import NominatingInfo, NominatingMode
from wasmsched.framework.status import Code, Status
from wasmsched.framework.types import PodInfo, QueuedPodInfo, get_pod_key
from wasmsched.plugins.prioritysort import PrioritySort
from wasmsched.plugins.schedulinggates import SchedulingGates
from wasmsched.scheduler.queue import QueueingStrategy, SchedulingQueue, build_queueing_hint_map
from wasmsched.testing.builders import make_node, make_pod
from wasmsched.util.clock import SimClock

SCHED = "default-scheduler"
NODE_ADD = ClusterEvent(EventResource.NODE, ActionType.ADD, "NodeAdd")
NODE_LABEL = ClusterEvent(EventResource.NODE, ActionType.UPDATE_NODE_LABEL, "NodeLabelChange")
POD_LABEL_REG = ClusterEvent(EventResource.POD, ActionType.UPDATE_POD_LABEL)
POD_UPDATE_REG = ClusterEvent(EventResource.POD, ActionType.UPDATE)


def queue_hint_return_queue(pod: Any, old: Any, new: Any) -> QueueingHint:
    return QueueingHint.QUEUE


def queue_hint_return_skip(pod: Any, old: Any, new: Any) -> QueueingHint:
    return QueueingHint.QUEUE_SKIP


def queue_hint_raises(pod: Any, old: Any, new: Any) -> QueueingHint:
    raise RuntimeError("hint failed")


def new_queue(
    clock: SimClock,
    registrations: list[tuple[str, ClusterEvent, Callable[[Any, Any, Any], QueueingHint] | None]] | None = None,
    pre_enqueue: Callable[[Pod], Any] | None = None,
) -> SchedulingQueue:
    hints = {SCHED: build_queueing_hint_map(
        [(plugin, ClusterEventWithHint(ev, fn)) for plugin, ev, fn in (registrations or [])])}
    pe = {SCHED: pre_enqueue} if pre_enqueue is not None else None
    return SchedulingQueue(PrioritySort().less, clock.now, queueing_hints=hints, pre_enqueue=pe)


def where(q: SchedulingQueue, pod: Pod) -> str:
    key = get_pod_key(pod)
    found = []
    if q.active_q.get(key) is not None:
        found.append("active")
    if q.backoff_q.get(key) is not None:
        found.append("backoff")
    if key in q.unschedulable_pods:
        found.append("unschedulable")
    if key in q.gated_pods:
        found.append("gated")
    assert len(found) <= 1, f"pod in several queues: {found}"
    return found[0] if found else "none"


def pod(name: str, prio: int | None = None) -> Pod:
    w = make_pod(name).uid(name)
    if prio is not None:
        w.priority(prio)
    return w.obj()


def fail(q: SchedulingQueue, qpi: QueuedPodInfo, unschedulable: set[str] = frozenset(),  # type: ignore[assignment]
         pending: set[str] = frozenset()) -> None:  # type: ignore[assignment]
    qpi.unschedulable_plugins = set(unschedulable)
    qpi.pending_plugins = set(pending)
    q.add_unschedulable_if_not_present(qpi)


# ----- ordering ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "pods", "want"), [
    ("higher priority first", [("low", 0), ("high", 1000), ("mid", 100)], ["high", "mid", "low"]),
    ("equal priority: earlier timestamp first", [("a", 10), ("b", 10), ("c", 10)], ["a", "b", "c"]),
    ("unset priority counts as 0", [("unset", None), ("neg", -5), ("pos", 1)], ["pos", "unset", "neg"]),
    ("priority beats timestamp", [("old-low", 1), ("new-high", 2), ("old-high", 2)],
     ["new-high", "old-high", "old-low"]),
])
def test_queue_order(name: str, pods: list[tuple[str, int | None]], want: list[str]) -> None:
    clock = SimClock()
    q = new_queue(clock)
    for n, p in pods:
        q.add(pod(n, p))
        clock.advance(0.001)
    got = []
    while (qpi := q.pop()) is not None:
        got.append(qpi.pod.metadata.name)
    assert got == want


def _pop_order(use_key: bool) -> tuple[list[str], list[str]]:
    """Random pods (priority ties, timestamp ties, updates), popped: (order, order by (priority desc,
    timestamp, last push))."""
    import random

    rng = random.Random(5)
    clock = SimClock()
    q = new_queue(clock)
    if use_key:
        q.active_q.use_sort_key(PrioritySort.sort_key)
    pods: dict[str, Pod] = {}
    pushed: dict[str, int] = {}  # the sequence number of each pod's last push
    seq = iter(range(1000))
    for i in range(200):
        p = pod(f"p{i}", rng.choice([None, -1, 0, 5, 100]))
        pods[p.metadata.name] = p
        q.add(p)
        pushed[p.metadata.name] = next(seq)
        if rng.random() < 0.5:
            clock.advance(0.001)
        if rng.random() < 0.2:
            old = pods[f"p{rng.randrange(i + 1)}"]
            new = type(old)()
            new.CopyFrom(old)
            new.metadata.labels["v"] = str(i)  # a pod's priority cannot change (immutable in kube)
            q.update(old, new)
            pods[new.metadata.name] = new
            pushed[new.metadata.name] = next(seq)
    queued = {name: q.active_q.get(name) for name in pods}
    want = sorted(pods, key=lambda n: (-queued[n].pod_info.priority, queued[n].timestamp, pushed[n]))  # type: ignore[union-attr]
    got = []
    while (qpi := q.pop()) is not None:
        got.append(qpi.pod.metadata.name)
    return got, want


def test_sort_key_orders_like_less() -> None:
    # The scheduler orders activeQ by PrioritySort.sort_key: the same pops as with less; ties (equal
    # priority and timestamp) in the order the pods were pushed, updates included.
    by_less, want = _pop_order(False)
    by_key, _ = _pop_order(True)
    assert by_key == by_less == want and len(want) == 200
    q = new_queue(SimClock())
    q.add(pod("x"))
    with pytest.raises(ValueError, match="non-empty"):
        q.active_q.use_sort_key(PrioritySort.sort_key)


def test_pop_counts_attempts_and_cycles() -> None:
    clock = SimClock()
    q = new_queue(clock)
    q.add(pod("p"))
    qpi = q.pop()
    assert qpi is not None
    assert qpi.attempts == 1
    assert qpi.initial_attempt_timestamp == clock.now()
    assert q.scheduling_cycle == 1
    assert q.in_flight_count() == 1
    q.done(qpi.pod)
    assert q.in_flight_count() == 0
    assert q.pop() is None


def test_update_in_active_q_keeps_position_data() -> None:
    # kube TestPriorityQueue_Update: updating a pod in activeQ keeps it there, with the new object.
    clock = SimClock()
    q = new_queue(clock)
    p = pod("p", 1)
    q.add(p)
    new = Pod()
    new.CopyFrom(p)
    new.metadata.labels["x"] = "y"
    q.update(p, new)
    assert where(q, p) == "active"
    qpi = q.pop()
    assert qpi is not None and qpi.pod.metadata.labels["x"] == "y"


def test_update_unknown_pod_adds_to_active_q() -> None:
    clock = SimClock()
    q = new_queue(clock)
    p = pod("p")
    q.update(p, p)
    assert where(q, p) == "active"


def test_delete_removes_from_every_queue() -> None:
    clock = SimClock()
    q = new_queue(clock, [("foo", NODE_ADD, None)])
    a, b = pod("a"), pod("b")
    q.add(a)
    q.add(b)
    qpi = q.pop()
    assert qpi is not None
    fail(q, qpi, {"foo"})
    assert where(q, qpi.pod) == "unschedulable"
    q.delete(a)
    q.delete(b)
    assert where(q, a) == "none" and where(q, b) == "none"
    assert q.pop() is None


# ----- backoff ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("count", "want"), [
    # backoff_queue_test.go TestBackoffQueue_calculateBackoffDuration, in seconds (1s initial, 10s max).
    (0, 0.0),  # "no backoff": a pod never attempted gets no penalty
    (1, 1.0),
    (2, 2.0),
    (3, 4.0),
    (4, 8.0),
    (5, 10.0),
    (6, 10.0),
    (64, 10.0),
])
def test_backoff_duration(count: int, want: float) -> None:
    q = new_queue(SimClock())
    qpi = QueuedPodInfo(PodInfo(pod("p")), timestamp=0.0, attempts=count)
    for _ in range(count):
        fail(q, qpi, {"foo"})  # rejected: UnschedulableCount
        q.unschedulable_pods.clear()
    assert q._backoff_duration(qpi) == want


@pytest.mark.parametrize(("failures", "want"), [
    # getBackoffTime: the consecutive errors count when the last attempt ended in an error, else the
    # rejections; a rejection resets the errors
    ("UUU", 4.0),
    ("UUUE", 1.0),
    ("UUUEE", 2.0),
    ("UEEEU", 2.0),
    ("EEEE", 8.0),
])
def test_backoff_counts_the_latest_kind_of_failure(failures: str, want: float) -> None:
    q = new_queue(SimClock())
    qpi = QueuedPodInfo(PodInfo(pod("p")), timestamp=0.0, attempts=len(failures))
    for kind in failures:
        fail(q, qpi, {"foo"} if kind == "U" else set())
        q.unschedulable_pods.clear()
        q.backoff_q.delete(get_pod_key(qpi.pod))
        q.active_q.delete(get_pod_key(qpi.pod))
    assert q._backoff_duration(qpi) == want


@pytest.mark.parametrize(("failures", "want_backoff"), [(1, 1.0), (2, 2.0), (3, 4.0), (4, 8.0), (5, 10.0), (7, 10.0)])
def test_backoff_doubles_per_attempt(failures: int, want_backoff: float) -> None:
    clock = SimClock()
    q = new_queue(clock)
    q.add(pod("p"))
    for i in range(failures):
        clock.advance(100)  # far past any backoff
        q.flush_backoff_q_completed()
        qpi = q.pop()
        assert qpi is not None, f"attempt {i + 1}"
        fail(q, qpi)  # an error: no rejector plugins -> backoffQ
        assert where(q, qpi.pod) == "backoff"
    expiry = q.next_backoff_expiry()
    assert expiry == pytest.approx(clock.now() + want_backoff)
    clock.advance(want_backoff - 0.001)
    assert q.flush_backoff_q_completed() == 0
    clock.advance(0.001)
    assert q.flush_backoff_q_completed() == 1
    assert where(q, pod("p")) == "active"


def test_backoff_queue_ordered_by_expiry() -> None:
    clock = SimClock()
    q = new_queue(clock)
    q.add(pod("a"))
    q.add(pod("b"))
    a = q.pop()
    b = q.pop()
    assert a is not None and b is not None
    for _ in range(2):
        fail(q, a)
        q.backoff_q.delete(get_pod_key(a.pod))
    fail(q, a)  # the third consecutive error: 4s
    clock.advance(0.5)
    fail(q, b)  # 1s
    assert q.next_backoff_expiry() == pytest.approx(clock.now() + 1.0)
    clock.advance(1.0)
    q.flush_backoff_q_completed()
    assert where(q, b.pod) == "active" and where(q, a.pod) == "backoff"


# ----- queueing hints ---------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "unschedulable", "pending", "registrations", "event", "duration", "want"), [
    # TestPriorityQueue_MoveAllToActiveOrBackoffQueueWithQueueingHint
    ("Queue from a pending plugin queues pod to activeQ", set(), {"foo"},
     [("foo", NODE_ADD, queue_hint_return_queue)], NODE_ADD, 0.0, "active"),
    ("Queue queues pod to backoffQ if Pod is backing off", {"foo"}, set(),
     [("foo", NODE_ADD, queue_hint_return_queue)], NODE_ADD, 0.0, "backoff"),
    ("Queue queues pod to activeQ if Pod is not backing off", {"foo"}, set(),
     [("foo", NODE_ADD, queue_hint_return_queue)], NODE_ADD, 1.0, "active"),
    ("Skip keeps pod in unschedulablePods", {"foo"}, set(),
     [("foo", NODE_ADD, queue_hint_return_skip)], NODE_ADD, 0.0, "unschedulable"),
    ("event registered only by another plugin is ignored", {"foo"}, set(),
     [("bar", NODE_ADD, queue_hint_return_queue)], NODE_ADD, 0.0, "unschedulable"),
    ("event not registered at all is ignored", {"foo"}, set(),
     [("foo", NODE_LABEL, queue_hint_return_queue)], NODE_ADD, 0.0, "unschedulable"),
    ("registration without a hint function means Queue", {"foo"}, set(),
     [("foo", NODE_ADD, None)], NODE_ADD, 0.0, "backoff"),
    ("a failing hint function means Queue", {"foo"}, set(),
     [("foo", NODE_ADD, queue_hint_raises)], NODE_ADD, 0.0, "backoff"),
    ("one of two rejectors says Queue", {"foo", "bar"}, set(),
     [("foo", NODE_ADD, queue_hint_return_skip), ("bar", NODE_ADD, queue_hint_return_queue)],
     NODE_ADD, 0.0, "backoff"),
    ("unschedulable plugin Queue, pending plugin Skip -> backoff", {"foo"}, {"bar"},
     [("foo", NODE_ADD, queue_hint_return_queue), ("bar", NODE_ADD, queue_hint_return_skip)],
     NODE_ADD, 0.0, "backoff"),
    ("unschedulable plugin Queue, pending plugin Queue -> activeQ", {"foo"}, {"bar"},
     [("foo", NODE_ADD, queue_hint_return_queue), ("bar", NODE_ADD, queue_hint_return_queue)],
     NODE_ADD, 0.0, "active"),
    ("registration for all Node updates matches a label update", {"foo"}, set(),
     [("foo", ClusterEvent(EventResource.NODE, ActionType.UPDATE), None)], NODE_LABEL, 0.0, "backoff"),
    ("wildcard resource registration matches", {"foo"}, set(),
     [("foo", ClusterEvent(EventResource.WILDCARD, ActionType.ADD), None)], NODE_ADD, 0.0, "backoff"),
    ("wildcard event (UnschedulableTimeout) moves any rejected pod", {"foo"}, set(),
     [("foo", NODE_LABEL, queue_hint_return_skip)], EVENT_UNSCHEDULABLE_TIMEOUT, 0.0, "backoff"),
])
def test_move_all_with_queueing_hint(name: str, unschedulable: set[str], pending: set[str],
                                     registrations: list[Any], event: ClusterEvent, duration: float,
                                     want: str) -> None:
    clock = SimClock()
    q = new_queue(clock, registrations)
    p = pod("p")
    q.add(p)
    qpi = q.pop()
    assert qpi is not None
    fail(q, qpi, unschedulable, pending)
    assert where(q, p) == "unschedulable"
    clock.advance(duration)
    # A wildcard event carries no object (one would address a single pod).
    q.move_all_to_active_or_backoff_queue(event, None, None if event.is_wildcard() else make_node("n").obj())
    assert where(q, p) == want


def test_move_all_pre_check_filters_pods() -> None:
    clock = SimClock()
    q = new_queue(clock, [("foo", NODE_ADD, None)])
    a, b = pod("a"), pod("b")
    for p in (a, b):
        q.add(p)
    for _ in range(2):
        qpi = q.pop()
        assert qpi is not None
        fail(q, qpi, {"foo"})
    q.move_all_to_active_or_backoff_queue(NODE_ADD, None, None, lambda p: p.metadata.name == "a")
    assert where(q, a) == "backoff"
    assert where(q, b) == "unschedulable"


def test_hint_receives_pod_and_objects() -> None:
    seen: list[tuple[str, Any, Any]] = []

    def hint(p: Any, old: Any, new: Any) -> QueueingHint:
        seen.append((p.metadata.name, old, new))
        return QueueingHint.QUEUE_SKIP

    clock = SimClock()
    q = new_queue(clock, [("foo", NODE_LABEL, hint)])
    q.add(pod("p"))
    qpi = q.pop()
    assert qpi is not None
    fail(q, qpi, {"foo"})
    old, new = make_node("n").obj(), make_node("n").label("a", "b").obj()
    q.move_all_to_active_or_backoff_queue(NODE_LABEL, old, new)
    assert seen == [("p", old, new)]


def test_error_without_rejectors_goes_to_backoff() -> None:
    clock = SimClock()
    q = new_queue(clock, [("foo", NODE_ADD, None)])
    q.add(pod("p"))
    qpi = q.pop()
    assert qpi is not None
    fail(q, qpi)
    assert where(q, qpi.pod) == "backoff"


def test_flush_unschedulable_pods_leftover() -> None:
    clock = SimClock()
    q = new_queue(clock, [("foo", NODE_ADD, None)])
    q.add(pod("p"))
    qpi = q.pop()
    assert qpi is not None
    fail(q, qpi, {"foo"})
    clock.advance(5 * 60)
    assert q.flush_unschedulable_pods_leftover() == 0  # must be strictly longer than the max duration
    clock.advance(1)
    assert q.flush_unschedulable_pods_leftover() == 1
    assert where(q, qpi.pod) == "active"  # backoff (1s) long over


def test_activate_moves_unschedulable_and_backoff_pods() -> None:
    clock = SimClock()
    q = new_queue(clock, [("foo", NODE_ADD, None)])
    a, b = pod("a"), pod("b")
    q.add(a)
    q.add(b)
    qa, qb = q.pop(), q.pop()
    assert qa is not None and qb is not None
    fail(q, qa, {"foo"})
    fail(q, qb)
    assert (where(q, a), where(q, b)) == ("unschedulable", "backoff")
    q.activate([a, b])
    assert (where(q, a), where(q, b)) == ("active", "active")


def test_activate_runs_a_gated_pods_pre_enqueue_again_and_a_plugin_may_activate_from_pre_enqueue() -> None:
    # kube keeps gated pods among the unschedulable ones, so Activate runs their PreEnqueue again. A gang plugin
    # admits a pod once its whole gang exists and activates the siblings it gated (docs/abi.md §15.4); their
    # PreEnqueue activates the others back, which must neither recurse nor run twice.
    gang = {"a", "b", "c"}
    calls: list[str] = []
    q: SchedulingQueue

    def pre_enqueue(p: Pod) -> Status | None:
        calls.append(p.metadata.name)
        if not gang <= present:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ["waiting for the gang"])
        q.activate([pods[n] for n in sorted(gang - {p.metadata.name})])
        return None

    present: set[str] = set()
    pods = {n: pod(n) for n in sorted(gang)}
    q = new_queue(SimClock(), [], pre_enqueue=pre_enqueue)
    for n in ("a", "b"):
        present.add(n)
        q.add(pods[n])
    assert (where(q, pods["a"]), where(q, pods["b"])) == ("gated", "gated")
    # A gated pod stays gated when its PreEnqueue still fails.
    q.activate([pods["a"]])
    assert where(q, pods["a"]) == "gated"
    calls.clear()
    present.add("c")
    q.add(pods["c"])
    assert [where(q, p) for p in pods.values()] == ["active", "active", "active"]
    assert sorted(calls) == ["a", "b", "c"]


def test_an_event_moving_gated_pods_copes_with_their_pre_enqueue_activating_the_others() -> None:
    # The gang's PodGroup arrives after its pods: the event lifts every gate, and the first pod let in activates
    # the others, which the event's own pass then finds gone from the gated pods.
    names = ["a", "b", "c"]
    pods = {n: pod(n) for n in names}
    group_exists = False
    q: SchedulingQueue

    def pre_enqueue(p: Pod) -> Status | None:
        if not group_exists:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ["waiting for the group"], plugin="gang")
        q.activate([pods[n] for n in names if n != p.metadata.name])
        return None

    q = new_queue(SimClock(), [("gang", NODE_ADD, None)], pre_enqueue=pre_enqueue)
    for p in pods.values():
        q.add(p)
    assert [where(q, p) for p in pods.values()] == ["gated"] * 3
    group_exists = True
    assert q.move_all_to_active_or_backoff_queue(NODE_ADD) >= 1
    assert [where(q, p) for p in pods.values()] == ["active"] * 3


# ----- in-flight events -------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "before_pop", "during", "unschedulable", "pending", "registrations", "want"), [
    ("event during the cycle moves the pod to backoffQ", False, True, {"foo"}, set(),
     [("foo", NODE_ADD, queue_hint_return_queue)], "backoff"),
    ("event before the pop is not replayed", True, False, {"foo"}, set(),
     [("foo", NODE_ADD, queue_hint_return_queue)], "unschedulable"),
    ("event skipped by the hint keeps it unschedulable", False, True, {"foo"}, set(),
     [("foo", NODE_ADD, queue_hint_return_skip)], "unschedulable"),
    ("event for another plugin keeps it unschedulable", False, True, {"foo"}, set(),
     [("bar", NODE_ADD, queue_hint_return_queue)], "unschedulable"),
    ("event during the cycle for a pending plugin -> activeQ", False, True, set(), {"foo"},
     [("foo", NODE_ADD, queue_hint_return_queue)], "active"),
    ("no event, rejected -> unschedulable", False, False, {"foo"}, set(),
     [("foo", NODE_ADD, queue_hint_return_queue)], "unschedulable"),
])
def test_in_flight_events(name: str, before_pop: bool, during: bool, unschedulable: set[str], pending: set[str],
                          registrations: list[Any], want: str) -> None:
    clock = SimClock()
    q = new_queue(clock, registrations)
    p = pod("p")
    q.add(p)
    if before_pop:
        q.move_all_to_active_or_backoff_queue(NODE_ADD, None, make_node("n").obj())
    qpi = q.pop()
    assert qpi is not None
    if during:
        q.move_all_to_active_or_backoff_queue(NODE_ADD, None, make_node("n").obj())
    fail(q, qpi, unschedulable, pending)
    assert where(q, p) == want
    assert q.in_flight_count() == 0


def test_in_flight_events_are_per_pod_lifetime() -> None:
    # An event seen while pod a is in flight does not count for pod b popped later.
    clock = SimClock()
    q = new_queue(clock, [("foo", NODE_ADD, None)])
    a, b = pod("a", 10), pod("b", 0)
    q.add(a)
    q.add(b)
    qa = q.pop()
    assert qa is not None
    q.move_all_to_active_or_backoff_queue(NODE_ADD, None, None)
    fail(q, qa, {"foo"})
    qb = q.pop()
    assert qb is not None and qb.pod.metadata.name == "b"
    fail(q, qb, {"foo"})
    assert where(q, a) == "backoff"
    assert where(q, b) == "unschedulable"


def test_in_flight_pod_update_is_replayed() -> None:
    # scheduling_queue.go Update: an in-flight pod's update is recorded as the events
    # PodSchedulingPropertiesChange derives (here TargetPod/UpdatePodLabel), and replayed
    # through the hints when the pod comes back rejected.
    clock = SimClock()
    q = new_queue(clock, [("foo", POD_LABEL_REG, queue_hint_return_queue)])
    p = pod("p")
    q.add(p)
    qpi = q.pop()
    assert qpi is not None
    new = Pod()
    new.CopyFrom(p)
    new.metadata.labels["app"] = "web"
    q.update(p, new)
    assert where(q, p) == "none"  # still in flight
    fail(q, qpi, {"foo"})
    assert where(q, p) == "backoff"


def test_add_unschedulable_if_not_present_ignores_queued_pod() -> None:
    clock = SimClock()
    q = new_queue(clock, [("foo", NODE_ADD, None)])
    p = pod("p")
    q.add(p)
    qpi = q.pop()
    assert qpi is not None
    q.add(p)  # re-added while in flight (e.g. deleted and recreated)
    fail(q, qpi, {"foo"})
    assert where(q, p) == "active"
    assert q.in_flight_count() == 0


# ----- unschedulable pod updates ----------------------------------------------------------------


def _status_update(p: Pod) -> Pod:
    new = Pod()
    new.CopyFrom(p)
    c = new.status.conditions.add()
    c.type, c.status, c.reason = "PodScheduled", "False", "Unschedulable"
    new.metadata.resourceVersion = "999"
    return new


def _label_update(p: Pod) -> Pod:
    new = Pod()
    new.CopyFrom(p)
    new.metadata.labels["app"] = "web"
    return new


@pytest.mark.parametrize(("name", "registrations", "update", "want"), [
    ("status-only update does not move the pod", [("foo", NODE_ADD, None)], _status_update, "unschedulable"),
    ("status-only update with a Pod/UpdatePodLabel registration does not move the pod",
     [("foo", POD_LABEL_REG, None)], _status_update, "unschedulable"),
    ("label update with a Pod/UpdatePodLabel registration moves the pod",
     [("foo", POD_LABEL_REG, None)], _label_update, "backoff"),
    ("label update skipped by the hint keeps the pod", [("foo", POD_LABEL_REG, queue_hint_return_skip)],
     _label_update, "unschedulable"),
    # With queueing hints (GA), Update asks the rejector plugins' hints about the events the update
    # amounts to; a plugin that registered only Node/Add is not asked, so the pod stays.
    ("label update not registered by the rejector keeps the pod", [("foo", NODE_ADD, None)],
     _label_update, "unschedulable"),
])
def test_update_unschedulable_pod(name: str, registrations: list[Any], update: Callable[[Pod], Pod],
                                  want: str) -> None:
    clock = SimClock()
    q = new_queue(clock, registrations)
    p = pod("p")
    q.add(p)
    qpi = q.pop()
    assert qpi is not None
    fail(q, qpi, {"foo"})
    new = update(p)
    q.update(p, new)
    assert where(q, p) == want
    got = q.unschedulable_pods.get(get_pod_key(p)) or q.backoff_q.get(get_pod_key(p))
    assert got is not None and got.pod is new  # the stored object is the updated one


def test_status_only_update_with_pod_update_registration_is_asked() -> None:
    # kube: a status-only update is the general event TargetPod/Update; a plugin registered
    # for Pod/Update is asked and its Queue moves the pod.
    clock = SimClock()
    q = new_queue(clock, [("foo", POD_UPDATE_REG, queue_hint_return_queue)])
    p = pod("p")
    q.add(p)
    qpi = q.pop()
    assert qpi is not None
    fail(q, qpi, {"foo"})
    q.update(p, _status_update(p))
    assert where(q, p) == "backoff"


TARGET_LABEL_REG = ClusterEvent(EventResource.TARGET_POD, ActionType.UPDATE_POD_LABEL)
TARGET_TOLERATION_REG = ClusterEvent(EventResource.TARGET_POD, ActionType.UPDATE_POD_TOLERATION)


@pytest.mark.parametrize(("name", "registered", "want"), [
    # kube 1.37 scheduling_queue.go Update: "Because the pod itself is being updated here, events are
    # associated with the resource TargetPod".
    ("TargetPod registration sees the pod's own update", TARGET_LABEL_REG, "backoff"),
    ("UnscheduledPod registration does not", ClusterEvent(EventResource.UNSCHEDULED_POD, ActionType.UPDATE_POD_LABEL),
     "unschedulable"),
    ("AssignedPod registration does not", ClusterEvent(EventResource.ASSIGNED_POD, ActionType.UPDATE_POD_LABEL),
     "unschedulable"),
    ("Pod registration covers TargetPod", POD_LABEL_REG, "backoff"),
])
def test_update_unschedulable_pod_is_a_target_pod_event(name: str, registered: ClusterEvent, want: str) -> None:
    clock = SimClock()
    q = new_queue(clock, [("foo", registered, queue_hint_return_queue)])
    p = pod("p")
    q.add(p)
    qpi = q.pop()
    assert qpi is not None
    fail(q, qpi, {"foo"})
    q.update(p, _label_update(p))
    assert where(q, p) == want


def test_update_continues_after_backoff() -> None:
    # With SchedulerPopFromBackoffQ off only a move to activeQ ends kube's loop over the update's
    # events: the label change sends the pod to backoffQ, the toleration change (a Pending plugin's
    # Queue) then to activeQ.
    clock = SimClock()
    q = new_queue(clock, [("foo", TARGET_LABEL_REG, queue_hint_return_queue),
                          ("bar", TARGET_TOLERATION_REG, queue_hint_return_queue)])
    p = pod("p")
    q.add(p)
    qpi = q.pop()
    assert qpi is not None
    fail(q, qpi, {"foo"}, {"bar"})
    new = _label_update(p)
    t = new.spec.tolerations.add()
    t.key = "k"
    q.update(p, new)
    assert where(q, p) == "active"


def test_in_flight_pod_update_is_seen_by_other_in_flight_pods() -> None:
    # kube's addEventsIfPodInFlight appends a pod's own update to the log every in-flight pod reads,
    # so a TargetPod registration of another in-flight pod's rejector sees it too.
    clock = SimClock()
    q = new_queue(clock, [("foo", TARGET_LABEL_REG, queue_hint_return_queue)])
    a, b = pod("a", 10), pod("b", 0)
    q.add(a)
    q.add(b)
    qa, qb = q.pop(), q.pop()
    assert qa is not None and qb is not None
    q.update(a, _label_update(a))
    fail(q, qb, {"foo"})
    assert where(q, b) == "backoff"
    fail(q, qa, {"foo"})
    assert where(q, a) == "backoff"


def test_update_of_pod_in_no_queue_adds_it_with_its_nomination() -> None:
    # kube's Update falls back to addPod, which records the pod's nominatedNodeName.
    clock = SimClock()
    q = new_queue(clock)
    p = pod("p")
    new = _label_update(p)
    new.status.nominatedNodeName = "n1"
    q.update(p, new)
    assert where(q, p) == "active"
    assert q.nominator.nominated_node(new) == "n1"


@pytest.mark.parametrize(("name", "new", "want"), [
    ("no object: for every pod", None, "backoff"),
    ("this pod: for it", "self", "backoff"),
    ("another pod: not for this one", "other", "unschedulable"),
    # isPodWorthRequeuing: a wildcard event's object that is not a pod is not for any pod.
    ("a node: not for this pod", "node", "unschedulable"),
])
def test_wildcard_event_with_an_object(name: str, new: str | None, want: str) -> None:
    clock = SimClock()
    q = new_queue(clock, [("foo", NODE_ADD, None)])
    p = pod("p")
    q.add(p)
    qpi = q.pop()
    assert qpi is not None
    fail(q, qpi, {"foo"})
    obj = {None: None, "self": p, "other": pod("q"), "node": make_node("n").obj()}[new]
    q.move_all_to_active_or_backoff_queue(EVENT_FORCE_ACTIVATE, None, obj)
    assert where(q, p) == want


def test_activate_in_flight_pod_requeues_it_when_rejected() -> None:
    # kube's Activate records ForceActivate for an in-flight pod; other in-flight pods ignore it.
    clock = SimClock()
    q = new_queue(clock, [("foo", NODE_ADD, None)])
    a, b = pod("a", 10), pod("b", 0)
    q.add(a)
    q.add(b)
    qa, qb = q.pop(), q.pop()
    assert qa is not None and qb is not None
    q.activate([a])
    fail(q, qb, {"foo"})
    fail(q, qa, {"foo"})
    assert where(q, a) == "backoff"
    assert where(q, b) == "unschedulable"


def test_build_queueing_hint_map_unrolls_pod() -> None:
    got = build_queueing_hint_map([("foo", ClusterEventWithHint(POD_LABEL_REG, None))])
    assert [e for e, _ in got] == [ClusterEvent(r, ActionType.UPDATE_POD_LABEL) for r in (
        EventResource.ASSIGNED_POD, EventResource.UNSCHEDULED_POD, EventResource.TARGET_POD)]


# ----- gated pods (PreEnqueue) ------------------------------------------------------------------


def _gated_queue(clock: SimClock) -> SchedulingQueue:
    gates = SchedulingGates()
    regs = [(gates.name, ev.event, ev.queueing_hint_fn) for ev in gates.events_to_register()]

    def pre_enqueue(p: Pod) -> Any:
        st = gates.pre_enqueue(p)
        if st is not None:
            st.plugin = gates.name
        return st

    return new_queue(clock, regs, pre_enqueue)


def test_gated_pod_stays_out_of_active_q() -> None:
    clock = SimClock()
    q = _gated_queue(clock)
    p = make_pod("p").uid("p").scheduling_gates("foo").obj()
    q.add(p)
    assert where(q, p) == "gated"
    assert q.pop() is None
    assert q.pending_pods()["gated"][0].gating_plugin == "SchedulingGates"
    # Cluster events do not un-gate it.
    q.move_all_to_active_or_backoff_queue(NODE_ADD, None, make_node("n").obj())
    q.move_all_to_active_or_backoff_queue(EVENT_UNSCHEDULABLE_TIMEOUT)
    assert where(q, p) == "gated"
    clock.advance(3600)
    q.flush_backoff_q_completed()
    q.flush_unschedulable_pods_leftover()
    assert where(q, p) == "gated"


def test_gated_pod_update_keeping_a_gate_stays_gated() -> None:
    clock = SimClock()
    q = _gated_queue(clock)
    p = make_pod("p").uid("p").scheduling_gates("foo", "bar").obj()
    q.add(p)
    new = Pod()
    new.CopyFrom(p)
    del new.spec.schedulingGates[0]
    q.update(p, new)
    assert where(q, p) == "gated"


def test_gated_pod_update_lifting_the_gate_goes_to_active_q() -> None:
    # A pod never attempted has no backoff (calculateBackoffDuration returns 0 for Attempts == 0),
    # so lifting the gate puts it straight into activeQ.
    clock = SimClock()
    q = _gated_queue(clock)
    p = make_pod("p").uid("p").scheduling_gates("foo").obj()
    q.add(p)
    new = Pod()
    new.CopyFrom(p)
    new.spec.ClearField("schedulingGates")
    q.update(p, new)
    assert where(q, p) == "active"
    qpi = q.pop()
    assert qpi is not None and qpi.pod is new and not qpi.gated()


def test_gated_pod_lifted_after_a_while_goes_to_active_q() -> None:
    clock = SimClock()
    q = _gated_queue(clock)
    p = make_pod("p").uid("p").scheduling_gates("foo").obj()
    q.add(p)
    clock.advance(60)
    new = Pod()
    new.CopyFrom(p)
    new.spec.ClearField("schedulingGates")
    q.update(p, new)
    assert where(q, p) == "active"


def test_gated_pod_deleted() -> None:
    clock = SimClock()
    q = _gated_queue(clock)
    p = make_pod("p").uid("p").scheduling_gates("foo").obj()
    q.add(p)
    q.delete(p)
    assert where(q, p) == "none"


# ----- nominator --------------------------------------------------------------------------------


def _nominated(q: SchedulingQueue, node: str) -> list[str]:
    return [pi.pod.metadata.name for pi in q.nominator.nominated_pods_for_node(node)]


def test_nominator_add_from_status_and_override() -> None:
    q = new_queue(SimClock())
    a = make_pod("a").uid("a").nominated_node("n1").obj()
    q.nominator.add_nominated_pod(PodInfo(a), None)
    assert _nominated(q, "n1") == ["a"]
    assert q.nominator.nominated_node(a) == "n1"
    # Override wins over the pod's status.
    q.nominator.add_nominated_pod(PodInfo(a), NominatingInfo("n2", NominatingMode.OVERRIDE))
    assert _nominated(q, "n1") == [] and _nominated(q, "n2") == ["a"]
    # Override with "" clears the nomination.
    q.nominator.add_nominated_pod(PodInfo(a), NominatingInfo("", NominatingMode.OVERRIDE))
    assert _nominated(q, "n2") == [] and q.nominator.nominated_node(a) == ""
    # Noop falls back to the status.
    q.nominator.add_nominated_pod(PodInfo(a), NominatingInfo("n3", NominatingMode.NOOP))
    assert _nominated(q, "n1") == ["a"]


def test_nominator_pod_without_nomination_is_not_added() -> None:
    q = new_queue(SimClock())
    a = pod("a")
    q.nominator.add_nominated_pod(PodInfo(a), None)
    assert q.nominator._node_to_pods == {}


def test_nominator_several_pods_and_delete() -> None:
    q = new_queue(SimClock())
    a = make_pod("a").uid("a").nominated_node("n1").obj()
    b = make_pod("b").uid("b").nominated_node("n1").obj()
    c = make_pod("c").uid("c").nominated_node("n2").obj()
    for p in (a, b, c):
        q.nominator.add_nominated_pod(PodInfo(p), None)
    assert _nominated(q, "n1") == ["a", "b"]
    q.nominator.delete_nominated_pod_if_exists(a)
    assert _nominated(q, "n1") == ["b"]
    q.nominator.delete_nominated_pod_if_exists(a)  # twice is fine
    q.delete(b)  # queue delete removes the nomination too
    assert _nominated(q, "n1") == []
    assert _nominated(q, "n2") == ["c"]


def test_nominator_update_keeps_nomination_unless_changed() -> None:
    # nominator.go updateNominatedPod: an update that doesn't set nominatedNodeName keeps the old one.
    q = new_queue(SimClock())
    a = make_pod("a").uid("a").obj()
    q.nominator.add_nominated_pod(PodInfo(a), NominatingInfo("n1", NominatingMode.OVERRIDE))
    new = Pod()
    new.CopyFrom(a)
    new.metadata.labels["x"] = "y"
    q.nominator.update_nominated_pod(a, PodInfo(new))
    assert _nominated(q, "n1") == ["a"]
    assert q.nominator.nominated_pods_for_node("n1")[0].pod is new
    newer = Pod()
    newer.CopyFrom(new)
    newer.status.nominatedNodeName = "n2"
    q.nominator.update_nominated_pod(new, PodInfo(newer))
    assert _nominated(q, "n1") == [] and _nominated(q, "n2") == ["a"]


def test_queue_update_refreshes_nominated_pod() -> None:
    clock = SimClock()
    q = new_queue(clock)
    a = make_pod("a").uid("a").nominated_node("n1").obj()
    q.add(a)
    q.nominator.add_nominated_pod(PodInfo(a), None)
    new = Pod()
    new.CopyFrom(a)
    new.metadata.labels["x"] = "y"
    q.update(a, new)
    assert q.nominator.nominated_pods_for_node("n1")[0].pod is new


def test_added_pod_keeps_the_nomination_it_carries_even_when_gated() -> None:
    """kube's addPod records a new pod's status.nominatedNodeName in the nominator before it can be popped
    (an earlier scheduler's nomination survives a restart; nominated pods count in Filter)."""
    clock = SimClock()
    q = new_queue(clock)
    a = make_pod("a").uid("a").nominated_node("n1").obj()
    gated = make_pod("g").uid("g").nominated_node("n1").obj()
    gated.spec.schedulingGates.add(name="wait")
    plain = make_pod("p").uid("p").obj()
    for p in (a, gated, plain):
        q.add(p)
    assert [pi.pod.metadata.name for pi in q.nominator.nominated_pods_for_node("n1")] == ["a", "g"]
    assert q.nominator.nominated_node(plain) == ""


def test_queueing_strategy_order() -> None:
    assert QueueingStrategy.QUEUE_SKIP < QueueingStrategy.QUEUE_AFTER_BACKOFF < QueueingStrategy.QUEUE_IMMEDIATELY


_ = Node  # re-exported type used in annotations of helpers
